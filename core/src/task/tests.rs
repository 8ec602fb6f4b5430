use super::*;
use crate::agent::builtin_agents;
use crate::session::{ImageInputs, Provider, TurnError};
use crate::tool::builtin::builtin_specs;

fn tools() -> Vec<ToolSpec> {
    let mut t = builtin_specs();
    t.push(task_spec(&builtin_agents()));
    t
}

fn names(plan: &ChildPlan) -> Vec<&str> {
    plan.tools.iter().map(|t| t.name.as_str()).collect()
}

#[test]
fn the_default_child_is_an_explorer_without_task_or_writes() {
    let plan = plan_child(
        r#"{"description":"find tests","prompt":"List the test files."}"#,
        &builtin_agents(),
        None,
        ApprovalPolicy::ReadOnly,
        &tools(),
    )
    .unwrap();
    assert_eq!(plan.agent.name, "Explorer");
    assert_eq!(plan.prompt, "List the test files.");
    assert_eq!(plan.description, "find tests");
    let names = names(&plan);
    assert!(
        names.contains(&"read_file") && names.contains(&"list_files"),
        "{names:?}"
    );
    for absent in [
        "task",
        "write_file",
        "edit_file",
        "run_command",
        "web_fetch",
    ] {
        assert!(!names.contains(&absent), "{absent} in {names:?}");
    }
}

#[test]
fn an_agent_with_effects_the_policy_denies_is_refused() {
    let args = r#"{"description":"fix","prompt":"Fix the bug.","agent":"builder"}"#;
    let err = plan_child(
        args,
        &builtin_agents(),
        None,
        ApprovalPolicy::ReadOnly,
        &tools(),
    )
    .unwrap_err();
    assert!(err.is_error);
    assert!(
        err.content.contains("`Builder`") && err.content.contains("approval policy"),
        "{}",
        err.content
    );
    for policy in [ApprovalPolicy::Ask, ApprovalPolicy::Auto] {
        let plan = plan_child(args, &builtin_agents(), None, policy, &tools()).unwrap();
        assert!(names(&plan).contains(&"run_command"));
        assert!(!names(&plan).contains(&"task"), "no nesting");
    }
}

#[test]
fn bad_calls_are_results_the_model_can_act_on() {
    let agents = builtin_agents();
    let table = [
        ("not json", "not valid JSON"),
        (r#"{"prompt":"x"}"#, "description"),
        (r#"{"description":"d","prompt":"  "}"#, "`prompt` is empty"),
        (
            r#"{"description":"d","prompt":"p","agent":"Ghost"}"#,
            "no agent `Ghost`",
        ),
        (r#"{"description":"d","prompt":"p","extra":1}"#, "extra"),
    ];
    for (args, needle) in table {
        let err = plan_child(args, &agents, None, ApprovalPolicy::Auto, &tools()).unwrap_err();
        assert!(err.is_error);
        assert!(err.content.contains(needle), "{args}: {}", err.content);
    }
}

#[test]
fn the_child_config_keeps_the_parents_provider_and_policy() {
    let mut parent = SessionConfig::new(Provider::new("http://p/v1", None), "big-model");
    parent.approval = ApprovalPolicy::Auto;
    parent.system_prompt = Some("parent prompt".into());
    parent.tools = tools();
    let plan = plan_child(
        r#"{"description":"d","prompt":"p"}"#,
        &builtin_agents(),
        None,
        parent.approval,
        &parent.tools,
    )
    .unwrap();
    let child = child_config(&parent, &plan, "child prompt".into(), &|_| None);
    assert_eq!(child.model, "big-model");
    assert_eq!(child.provider, parent.provider);
    assert_eq!(child.approval, ApprovalPolicy::Auto);
    assert_eq!(child.system_prompt.as_deref(), Some("child prompt"));
    assert_eq!(child.max_steps, CHILD_MAX_STEPS);
    assert!(child.tools.iter().all(|t| t.name != TASK_TOOL));
    let mut own = plan.clone();
    own.agent = crate::agent::parse_agent_md(
        "---\nname: Scout\nmodel: small-model\n---\nYou scout.",
        "Scout/AGENT.md",
    )
    .unwrap();
    assert_eq!(own.agent.model.as_deref(), Some("small-model"));
    assert_eq!(
        child_config(&parent, &own, String::new(), &|_| None).model,
        "small-model"
    );
    parent.max_steps = 3;
    assert_eq!(
        child_config(&parent, &plan, String::new(), &|_| None).max_steps,
        3
    );
}

fn agent_with_model(model: &str) -> crate::agent::Agent {
    crate::agent::parse_agent_md(
        &format!("---\nname: Looker\nmodel: {model}\n---\nYou look."),
        "Looker/AGENT.md",
    )
    .unwrap()
}

#[test]
fn a_child_on_another_model_takes_images_as_that_model_does() {
    use crate::config::Config;
    let mut parent = SessionConfig::new(Provider::new("http://p/v1", None), "text-model");
    parent.images = ImageInputs::Placeholder;
    let mut plan = plan_child(
        r#"{"description":"d","prompt":"p"}"#,
        &builtin_agents(),
        None,
        ApprovalPolicy::Auto,
        &tools(),
    )
    .unwrap();
    let config = Config::parse(
        r#"{"providers":{"p":{"url":"http://p/v1","images":true,
            "models":{"text-model":{"images":false},"gpt-4o-blind":{"images":false}}}}}"#,
    )
    .unwrap();
    let stated = |model: &str| config.image_inputs("p", model).ok().flatten();
    let images_for = |parent: &SessionConfig, plan: &ChildPlan| {
        child_config(parent, plan, String::new(), &stated).images
    };
    // The agent names no model: the parent's model, the parent's setting (even where the
    // configuration would say otherwise, as the parent's may come from elsewhere).
    parent.images = ImageInputs::Parts;
    assert_eq!(images_for(&parent, &plan), ImageInputs::Parts);
    parent.images = ImageInputs::Placeholder;
    // The provider's key states images for a model without its own key.
    plan.agent = agent_with_model("qwen2.5-vl");
    assert_eq!(images_for(&parent, &plan), ImageInputs::Parts);
    // The model's key beats the known family.
    plan.agent = agent_with_model("gpt-4o-blind");
    parent.images = ImageInputs::Parts;
    assert_eq!(images_for(&parent, &plan), ImageInputs::Placeholder);
    // Nothing stated: the known families decide, either way.
    let nothing = |_: &str| None;
    plan.agent = agent_with_model("gpt-4o-mini");
    parent.images = ImageInputs::Placeholder;
    let child = child_config(&parent, &plan, String::new(), &nothing);
    assert_eq!(
        (child.model.as_str(), child.images),
        ("gpt-4o-mini", ImageInputs::Parts)
    );
    plan.agent = agent_with_model("llama3");
    parent.images = ImageInputs::Parts;
    assert_eq!(
        child_config(&parent, &plan, String::new(), &nothing).images,
        ImageInputs::Placeholder
    );
}

#[test]
fn children_decide_a_named_models_images_with_what_they_are_told() {
    let mut parent = SessionConfig::new(Provider::new("http://p/v1", None), "text-model");
    parent.approval = ApprovalPolicy::Auto;
    parent.tools = tools();
    let mut agents = builtin_agents();
    agents.push(agent_with_model("local-vl"));
    let call = r#"{"description":"d","prompt":"Look.","agent":"Looker"}"#;
    let children = Children::new(parent.clone(), agents.clone());
    assert_eq!(
        children.start(call).unwrap().config.images,
        ImageInputs::Placeholder,
        "unknown family, nothing stated"
    );
    let children = Children::new(parent, agents)
        .stated_images(|model| (model == "local-vl").then_some(ImageInputs::Parts));
    assert_eq!(
        children.start(call).unwrap().config.images,
        ImageInputs::Parts
    );
}

#[test]
fn results_from_each_outcome() {
    let mut calls = Message::assistant("");
    calls.tool_calls = vec![
        serde_json::from_value(
            json!({"id":"c","type":"function","function":{"name":"read_file","arguments":"{}"}}),
        )
        .unwrap(),
    ];
    let history = vec![
        Message::user("p"),
        calls,
        Message::tool("c", "file text"),
        Message::assistant("  The answer.  "),
    ];
    let ok = child_result("Explorer", &TurnOutcome::Finished, &history);
    assert_eq!(ok, ToolOutput::ok("The answer."));
    let failed = child_result(
        "Explorer",
        &TurnOutcome::Failed(TurnError::StepLimit { limit: 30 }),
        &history,
    );
    assert!(failed.is_error);
    assert!(
        failed
            .content
            .starts_with("The subagent `Explorer` failed:"),
        "{}",
        failed.content
    );
    assert!(failed.content.contains("The answer."));
    let cancelled = child_result("Explorer", &TurnOutcome::Cancelled, &history[..2]);
    assert!(cancelled.is_error && cancelled.content.contains("cancelled"));
    let empty = child_result("Explorer", &TurnOutcome::Finished, &history[..3]);
    assert!(empty.is_error && empty.content.contains("without an answer"));
    let long = vec![Message::assistant("x".repeat(MAX_RESULT_CHARS * 2))];
    let capped = child_result("Explorer", &TurnOutcome::Finished, &long);
    assert!(capped.content.chars().count() < MAX_RESULT_CHARS + 200);
}

#[test]
fn child_events_carry_the_parent_call_id() {
    let tagged = ChildEvent {
        parent_call_id: "call_7".into(),
        agent: "Explorer".into(),
        event: Event::TextDelta { text: "hi".into() },
    };
    let v = serde_json::to_value(&tagged).unwrap();
    assert_eq!(
        v,
        json!({"parent_call_id": "call_7", "agent": "Explorer", "event": {"type": "text_delta", "text": "hi"}})
    );
    // Out of the parent's poll it is an event like any other, and reads back the same.
    let event = Event::Child(Box::new(tagged));
    let v = serde_json::to_value(&event).unwrap();
    assert_eq!(v["type"], "child");
    assert_eq!(v["parent_call_id"], "call_7");
    assert_eq!(serde_json::from_value::<Event>(v).unwrap(), event);
    // A child's streamed piece is a delta to the parent too; a child's end is not the
    // parent's.
    assert!(event.is_delta() && !event.is_final());
    let ended = Event::Child(Box::new(ChildEvent {
        parent_call_id: "call_7".into(),
        agent: "Explorer".into(),
        event: Event::TurnCancelled,
    }));
    assert!(!ended.is_delta() && !ended.is_final());
    assert_eq!(TurnOutcome::from_event(&ended), None);
}

#[test]
fn usage_adds_the_childrens() {
    let u = |p, c| Usage {
        prompt_tokens: Some(p),
        completion_tokens: Some(c),
        total_tokens: Some(p + c),
        extra: Default::default(),
    };
    assert_eq!(add_usage(None, &[]), None);
    assert_eq!(
        add_usage(Some(u(10, 2)), &[u(5, 1), u(1, 1)]),
        Some(u(16, 4))
    );
    assert_eq!(add_usage(None, &[u(5, 1)]), Some(u(5, 1)));
    // Cached prompt tokens are summed too, whichever way each reported them.
    let mut parent = u(10, 2);
    parent
        .extra
        .insert("prompt_cache_hit_tokens".into(), serde_json::json!(4));
    let mut child = u(5, 1);
    child.extra.insert(
        "prompt_tokens_details".into(),
        serde_json::json!({"cached_tokens": 3}),
    );
    let sum = add_usage(Some(parent), &[child, u(1, 1)]).unwrap();
    assert_eq!(crate::pricing::cached_tokens(&sum), Some(7));
    assert_eq!(sum.prompt_tokens, Some(16));
}

#[test]
fn a_task_call_is_ordered_by_what_its_child_may_do() {
    let sub = Subagents {
        agents: builtin_agents(),
        tools: tools(),
        parent: None,
    };
    let call = |agent: &str| format!(r#"{{"description":"d","prompt":"p","agent":"{agent}"}}"#);
    assert_eq!(
        call_effect(&call("Explorer"), &sub, ApprovalPolicy::Auto),
        Effect::ReadOnly,
        "web_fetch does not make a child run alone"
    );
    assert_eq!(
        call_effect(&call("Builder"), &sub, ApprovalPolicy::Ask),
        Effect::Exec
    );
    let mut writer = builtin_agents()[0].clone();
    writer.name = "Writer".into();
    writer.tools = crate::agent::ToolFilter::all_except(&["run_command"]);
    let sub = Subagents {
        agents: vec![writer],
        tools: tools(),
        parent: None,
    };
    assert_eq!(
        call_effect(&call("Writer"), &sub, ApprovalPolicy::Auto),
        Effect::Write
    );
    // Refused calls do nothing.
    assert_eq!(
        call_effect(&call("Writer"), &sub, ApprovalPolicy::ReadOnly),
        Effect::ReadOnly
    );
    assert_eq!(
        call_effect(&call("Nobody"), &sub, ApprovalPolicy::Auto),
        Effect::ReadOnly
    );
    assert_eq!(
        call_effect("not json", &sub, ApprovalPolicy::Auto),
        Effect::ReadOnly
    );
}

#[test]
fn a_read_only_child_gets_only_the_read_only_tools_of_the_parents_mcp_servers() {
    let mcp = |name: &str, effect| ToolSpec {
        name: name.into(),
        description: String::new(),
        parameters: json!({"type": "object"}),
        effect,
    };
    let mut available = tools();
    available.push(mcp("mcp__docs__search", Effect::ReadOnly));
    available.push(mcp("mcp__docs__delete", Effect::Exec));
    let explorer = r#"{"description":"d","prompt":"p"}"#;
    for policy in [ApprovalPolicy::ReadOnly, ApprovalPolicy::Auto] {
        let plan = plan_child(explorer, &builtin_agents(), None, policy, &available).unwrap();
        assert!(names(&plan).contains(&"mcp__docs__search"));
        assert!(!names(&plan).contains(&"mcp__docs__delete"), "{policy:?}");
    }
    // An agent with effects gets them, and its map still filters them.
    let builder = r#"{"description":"d","prompt":"p","agent":"Builder"}"#;
    let plan = plan_child(
        builder,
        &builtin_agents(),
        None,
        ApprovalPolicy::Auto,
        &available,
    )
    .unwrap();
    assert!(names(&plan).contains(&"mcp__docs__delete"));
    let mut picky = builtin_agents()[0].clone();
    picky.name = "Picky".into();
    picky.tools = crate::agent::ToolFilter::all_except(&["mcp__docs__*"]);
    let plan = plan_child(
        r#"{"description":"d","prompt":"p","agent":"picky"}"#,
        &[picky],
        None,
        ApprovalPolicy::Auto,
        &available,
    )
    .unwrap();
    assert!(
        !names(&plan).iter().any(|n| n.starts_with("mcp__")),
        "{:?}",
        names(&plan)
    );
}

#[test]
fn children_start_and_report_as_both_drivers_need() {
    use crate::session::SessionError;
    let mut parent = SessionConfig::new(Provider::new("http://p/v1", None), "big-model");
    parent.approval = ApprovalPolicy::Auto;
    parent.tools = tools();
    let children = Children::new(parent, builtin_agents())
        .system_prompt(|agent, names| format!("{} with {}", agent.name, names.join(",")));
    assert_eq!(children.spec().name, TASK_TOOL);
    assert!(
        children
            .subagents()
            .tools
            .iter()
            .any(|t| t.name == TASK_TOOL)
    );

    let child = children
        .start(r#"{"description":"d","prompt":"Look.","agent":"Explorer"}"#)
        .unwrap();
    assert!(!child.tool_names.iter().any(|n| n == TASK_TOOL));
    assert_eq!(child.config.tools.len(), child.tool_names.len());
    let prompt = child.config.system_prompt.as_deref().unwrap();
    assert_eq!(
        prompt,
        format!("Explorer with {}", child.tool_names.join(","))
    );
    // A refusal is the result the model reads, not a panic or a silent default.
    let refused = children
        .start(r#"{"description":"d","prompt":"x","agent":"Nobody"}"#)
        .unwrap_err();
    assert!(
        refused.is_error && refused.content.contains("Nobody"),
        "{refused:?}"
    );
    assert!(children.start("{not json").unwrap_err().is_error);

    let history = [Message::user("Look."), Message::assistant("Found it.")];
    let done = children.result("Explorer", Ok(TurnOutcome::Finished), &history);
    assert!(!done.is_error && done.content == "Found it.", "{done:?}");
    let failed = children.result("Explorer", Err(SessionError::Busy), &[]);
    assert!(
        failed.is_error && failed.content.contains("could not start"),
        "{failed:?}"
    );
}

/// Rights never grow: under a read-only parent (Explorer) a call naming Builder gets a child
/// without the write and command tools, and an MCP tool with effects is left out too; a
/// parent's map that denies a tool denies it to every child.
#[test]
fn a_child_never_gets_more_than_its_parent() {
    let agents = builtin_agents();
    let explorer = agents[1].clone();
    let mut available = tools();
    available.push(ToolSpec {
        name: "mcp__docs__delete".into(),
        description: String::new(),
        parameters: serde_json::json!({"type": "object"}),
        effect: Effect::Exec,
    });
    let builder = r#"{"description":"d","prompt":"p","agent":"Builder"}"#;
    let plan = plan_child(
        builder,
        &agents,
        Some(&explorer),
        ApprovalPolicy::Auto,
        &available,
    )
    .unwrap();
    assert_eq!(plan.agent.name, "Builder");
    for denied in [
        "write_file",
        "edit_file",
        "run_command",
        "mcp__docs__delete",
    ] {
        assert!(
            !names(&plan).contains(&denied),
            "{denied}: {:?}",
            names(&plan)
        );
    }
    assert!(names(&plan).contains(&"read_file"));
    // The session orders such a call as the read-only call it now is.
    let sub = Subagents {
        agents: agents.clone(),
        tools: available.clone(),
        parent: Some(explorer),
    };
    assert_eq!(
        call_effect(builder, &sub, ApprovalPolicy::Auto),
        Effect::ReadOnly
    );
    // A parent whose own map denies web_fetch passes that on to a Builder child.
    let mut offline = agents[0].clone();
    offline.tools = crate::agent::ToolFilter::all_except(&["web_fetch"]);
    let plan = plan_child(
        builder,
        &agents,
        Some(&offline),
        ApprovalPolicy::Auto,
        &available,
    )
    .unwrap();
    assert!(!names(&plan).contains(&"web_fetch"));
    assert!(names(&plan).contains(&"run_command"));
}
