//! The shared behaviour suite (written once in the blocking crate) against the tokio driver,
//! over loopback.

#[path = "../../driver-blocking/tests/suite/mod.rs"]
#[macro_use]
mod suite;

use hrns_core::session::{Event, Question, Session};
use hrns_core::tool::{ToolOutput, ToolSpec};
use hrns_tokio::{Client, ClientConfig, Runner, Tool, ToolContext, ToolFuture, Toolbox};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Echoes; after [`suite::DROP_SLOW`] it sets `slow_left`, which the runner's tool update reads.
struct Echo {
    slow_left: Arc<AtomicBool>,
    /// The spec: the suite's, or the session's own `echo` for a child ([`suite::child_echo`]).
    spec: ToolSpec,
}

impl Tool for Echo {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }
    fn run<'a>(&'a self, arguments: &'a str, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        if suite::drops_slow(arguments) {
            self.slow_left.store(true, Ordering::SeqCst);
        }
        Box::pin(async move { ToolOutput::ok(suite::echo(arguments)) })
    }
}

struct Slow;
impl Tool for Slow {
    fn spec(&self) -> ToolSpec {
        suite::slow_spec()
    }
    fn run<'a>(&'a self, arguments: &'a str, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(suite::slow_ms(arguments))).await;
            ToolOutput::ok("slept")
        })
    }
}

struct Crash;
impl Tool for Crash {
    fn spec(&self) -> ToolSpec {
        suite::crash_spec()
    }
    fn run<'a>(&'a self, _arguments: &'a str, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move { panic!("the crash tool crashes") })
    }
}

fn toolbox(slow_left: &Arc<AtomicBool>) -> Toolbox {
    let mut tools = Toolbox::new();
    tools
        .add(Echo {
            slow_left: slow_left.clone(),
            spec: suite::echo_spec(),
        })
        .add(Slow)
        .add(Crash);
    tools
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Runs each turn on its own two-worker runtime, as a synchronous caller would.
struct Tokio;

impl suite::Harness for Tokio {
    fn run(&mut self, session: &mut Session, prompt: &str) -> Vec<(Instant, Event)> {
        let rt = runtime();
        let client = Client::new(session.config().provider.clone(), &ClientConfig::default());
        let slow_left = Arc::new(AtomicBool::new(false));
        let mut tools = toolbox(&slow_left);
        if session.config().tools.iter().any(|t| t.name == "task") {
            let mut child_tools = Toolbox::new();
            child_tools.add(Echo {
                slow_left: Arc::new(AtomicBool::new(false)),
                spec: suite::child_echo(session),
            });
            let children = suite::children_of(session);
            tools.add(hrns_tokio::tools::TaskTool::new(
                client.clone(),
                children,
                child_tools,
            ));
        }
        let mut runner = Runner::new(
            client,
            tools,
            ToolContext::new(std::env::temp_dir()).unwrap(),
        )
        .update_tools_with(move |tools| {
            slow_left.swap(false, Ordering::SeqCst).then(|| {
                // `crash` goes too: the default session of the suite does not offer it.
                tools.retain(|name| name != "slow" && name != "crash");
                suite::SLOW_LEFT.to_owned()
            })
        });
        let mut events = Vec::new();
        // The owner's loop: the session stays ours between steps.
        session.submit(prompt).expect("the session is idle");
        rt.block_on(async {
            while !session.is_idle() {
                for event in runner.complete_io(session).await {
                    // The session's own questions and its subagents': one path.
                    if let Some(question) = Question::pending_in(session, &event) {
                        let answer = suite::owner_answer(&question);
                        session
                            .handle_answer(Instant::now(), &question, answer)
                            .unwrap();
                    }
                    events.push((Instant::now(), event));
                }
            }
        });
        events
    }

    fn drive_after_question(
        &mut self,
        session: &mut Session,
        prompt: &str,
    ) -> Vec<(Instant, Event)> {
        let rt = runtime();
        let client = Client::new(session.config().provider.clone(), &ClientConfig::default());
        let tools = toolbox(&Arc::new(AtomicBool::new(false)));
        let mut runner = Runner::new(
            client,
            tools,
            ToolContext::new(std::env::temp_dir()).unwrap(),
        )
        .approve_with(|_| async { suite::owner_approval() });
        let mut events = Vec::new();
        session.submit(prompt).expect("the session is idle");
        rt.block_on(async {
            while session.asked().is_none() {
                assert!(
                    !session.is_idle(),
                    "the turn ended without a question: {events:?}"
                );
                let batch = runner.complete_io(session).await;
                events.extend(batch.into_iter().map(|e| (Instant::now(), e)));
            }
            runner
                .drive(session, |e| events.push((Instant::now(), e.clone())))
                .await;
        });
        events
    }
}

behaviour_tests!(Tokio);
