//! How each answer becomes findings: the judging half of [`Probe`], one method per step of
//! the plan, and the quirks each one learns.

use super::*;

impl Probe {
    fn set(&mut self, check: Check, verdict: Verdict, detail: impl Into<String>, action: &str) {
        self.findings.insert(
            check,
            Finding {
                check,
                verdict,
                detail: detail.into(),
                action: action.to_owned(),
            },
        );
    }

    fn stop(&mut self, why: &str) {
        self.stopped = Some(why.to_owned());
        self.plan.clear();
    }

    pub(super) fn judge(&mut self, step: Step, ex: Exchange) {
        if let Some(error) = &ex.error {
            if step == Step::Models {
                self.unreachable(error);
                return;
            }
        }
        if ex.status.is_some() && !self.findings.contains_key(&Check::Reachable) {
            self.reachable();
        }
        if step_streams(step) && ex.is_stream() {
            let analysis = judge::analyse_stream(&ex.body, &ex.content_type);
            self.stream_quirks.extend(analysis.quirks);
            self.reasoning_fields.extend(analysis.reasoning_fields);
            self.think_tags |= analysis.think_tags;
        }
        match step {
            Step::Models => self.judge_models(&ex),
            Step::Chat(field) => self.judge_chat(field, &ex),
            Step::Stream(options) => self.judge_stream(options, &ex),
            Step::Tools | Step::ToolsStreamedAuto | Step::ToolsStreamed | Step::Parallel => {
                self.judge_tools(step, &ex)
            }
            Step::StructuredOutput => self.judge_structured(&ex),
        }
        if self.plan.is_empty() && self.stopped.is_none() {
            self.conclude();
        }
    }

    fn unreachable(&mut self, error: &TransportError) {
        let action = match error.kind {
            TransportErrorKind::Tls => {
                "check the certificate; for a self-signed local server only, set skipVerify"
            }
            TransportErrorKind::InvalidRequest => "fix the provider's url in the config",
            _ => "check the url and that the server is running",
        };
        self.set(
            Check::Reachable,
            Verdict::Failed,
            format!("{}: {}", error.kind, error.message),
            action,
        );
        self.stop("the server is not reachable");
    }

    fn reachable(&mut self) {
        let url = self.provider.base_url.to_ascii_lowercase();
        let (verdict, detail, action) = if url.starts_with("https://") {
            if self.options.skip_verify {
                (
                    Verdict::Degraded,
                    "TLS, certificate not checked (skipVerify)",
                    "keep skipVerify for self-signed local servers only",
                )
            } else {
                (Verdict::Ok, "TLS, certificate verified", "")
            }
        } else if judge::is_local(&url) {
            (Verdict::Ok, "plain HTTP to a local address", "")
        } else {
            (
                Verdict::Degraded,
                "plain HTTP to a remote address: the key and the conversation travel unencrypted",
                "use an https:// url if the server offers one",
            )
        };
        self.set(Check::Reachable, verdict, detail, action);
    }

    fn auth_failed(&mut self, status: u16, message: &str) {
        let action = if self.provider.api_key.is_some() {
            "the key is refused: check key or keyEnv in the config"
        } else {
            "the provider wants a key: set key or keyEnv in the config"
        };
        self.set(
            Check::Authentication,
            Verdict::Failed,
            format!("{status}: {message}"),
            action,
        );
    }

    fn auth_ok(&mut self) {
        if !self.findings.contains_key(&Check::Authentication) {
            let detail = if self.provider.api_key.is_some() {
                "key accepted"
            } else {
                "no key sent, none needed"
            };
            self.set(Check::Authentication, Verdict::Ok, detail, "");
        }
    }

    fn judge_models(&mut self, ex: &Exchange) {
        let status = ex.status.unwrap_or(0);
        let skip_listed = |p: &mut Probe, why: &str| {
            p.set(Check::ModelListed, Verdict::Skipped, why, "");
            p.set(Check::ContextWindow, Verdict::Skipped, why, "");
        };
        if matches!(status, 401 | 403) {
            let message = judge::error_message(&ex.body);
            self.auth_failed(status, &message);
            self.set(Check::Models, Verdict::Failed, format!("{status}"), "");
            skip_listed(self, "no model list");
            return;
        }
        if !(200..300).contains(&status) {
            let (verdict, action) = if matches!(status, 404 | 405 | 501) {
                (
                    Verdict::Unsupported,
                    "no model list to pick from: give the model by name",
                )
            } else {
                (
                    Verdict::Failed,
                    "hrns models and onboarding cannot list models",
                )
            };
            let message = judge::error_message(&ex.body);
            self.set(
                Check::Models,
                verdict,
                format!("{status}: {message}"),
                action,
            );
            skip_listed(self, "no model list");
            return;
        }
        let Some(models) = judge::model_list(&ex.body) else {
            self.set(
                Check::Models,
                Verdict::Degraded,
                format!("not a model list: {}", judge::quote(&ex.body)),
                "no model list to pick from: give the model by name",
            );
            skip_listed(self, "no model list");
            return;
        };
        self.auth_ok();
        self.set(
            Check::Models,
            Verdict::Ok,
            format!("{} model{}", models.len(), plural(models.len())),
            "",
        );
        match models.iter().find(|m| m.id == self.model) {
            Some(entry) => {
                self.set(
                    Check::ModelListed,
                    Verdict::Ok,
                    format!("{} listed", self.model),
                    "",
                );
                match crate::context::window_from_model(entry) {
                    Some(tokens) => self.set(
                        Check::ContextWindow,
                        Verdict::Ok,
                        format!("{tokens} tokens"),
                        "",
                    ),
                    None => self.set(
                        Check::ContextWindow,
                        Verdict::Unsupported,
                        "not reported by /models",
                        "hrns cannot tell how full the context is from the list",
                    ),
                }
            }
            None => {
                let some: Vec<&str> = models.iter().take(5).map(|m| m.id.as_str()).collect();
                self.set(
                    Check::ModelListed,
                    Verdict::Degraded,
                    format!("{} is not listed (listed: {})", self.model, some.join(", ")),
                    "the server may still accept it as an alias; if chat fails, pick a listed one",
                );
                self.set(
                    Check::ContextWindow,
                    Verdict::Skipped,
                    "the model is not listed",
                    "",
                );
            }
        }
    }

    fn judge_chat(&mut self, field: MaxTokensField, ex: &Exchange) {
        if let Some(error) = &ex.error {
            self.set(Check::Chat, Verdict::Failed, judge::transport(error), "");
            self.plan.push_back(Step::Stream(StreamOptions::Send));
            return;
        }
        let status = ex.status.unwrap_or(0);
        if matches!(status, 400 | 422) && field == MaxTokensField::MaxTokens {
            let message = judge::error_message(&ex.body);
            let raw = String::from_utf8_lossy(&ex.body);
            if let Some(("max_tokens", learned)) = self.quirks.learn_rejection(&[&message, &raw]) {
                self.quirks = learned;
                self.plan
                    .push_front(Step::Chat(MaxTokensField::MaxCompletionTokens));
                return;
            }
        }
        if matches!(status, 401 | 403) {
            let message = judge::error_message(&ex.body);
            self.auth_failed(status, &message);
            self.set(
                Check::Chat,
                Verdict::Failed,
                format!("{status}: {message}"),
                "",
            );
            self.stop("authentication failed");
            return;
        }
        if !(200..300).contains(&status) {
            let message = judge::error_message(&ex.body);
            let action = if status == 404 {
                "check the model name (hrns models lists them)"
            } else {
                ""
            };
            self.set(
                Check::Chat,
                Verdict::Failed,
                format!("{status}: {message}"),
                action,
            );
            if status == 404 {
                self.stop("the model was not found");
                return;
            }
            self.plan.push_back(Step::Stream(StreamOptions::Send));
            return;
        }
        self.auth_ok();
        match judge::chat_response(&ex.body) {
            Ok(answer) => {
                self.reasoning_fields
                    .extend(answer.reasoning_fields.clone());
                self.think_tags |= answer.text.contains("<think>");
                if answer.text.trim().is_empty() && answer.tool_calls.is_empty() {
                    self.set(
                        Check::Chat,
                        Verdict::Degraded,
                        format!(
                            "empty answer (finish_reason {})",
                            answer.finish_reason.as_deref().unwrap_or("none")
                        ),
                        "",
                    );
                } else if answer.text.trim().is_empty() {
                    self.set(Check::Chat, Verdict::Ok, "answered with a tool call", "");
                } else {
                    self.set(
                        Check::Chat,
                        Verdict::Ok,
                        format!(
                            "answered {:?}",
                            crate::text::shorten(answer.text.trim(), 40)
                        ),
                        "",
                    );
                }
                let (detail, action) = match field {
                    MaxTokensField::MaxTokens => ("max_tokens accepted", ""),
                    MaxTokensField::MaxCompletionTokens => (
                        "max_tokens refused, max_completion_tokens accepted",
                        "sessions send max_completion_tokens (saved)",
                    ),
                };
                self.set(Check::TokenLimitField, Verdict::Ok, detail, action);
            }
            Err(e) => self.set(Check::Chat, Verdict::Failed, e, ""),
        }
        self.plan.push_back(Step::Stream(StreamOptions::Send));
    }

    fn judge_stream(&mut self, options: StreamOptions, ex: &Exchange) {
        if let Some(error) = &ex.error {
            self.set(
                Check::Streaming,
                Verdict::Failed,
                judge::transport(error),
                "",
            );
            self.after_stream();
            return;
        }
        let status = ex.status.unwrap_or(0);
        if matches!(status, 400 | 422) && options == StreamOptions::Send {
            let message = judge::error_message(&ex.body);
            let raw = String::from_utf8_lossy(&ex.body);
            if let Some(("stream_options", learned)) =
                self.quirks.learn_rejection(&[&message, &raw])
            {
                self.quirks = learned;
                self.set(
                    Check::StreamUsage,
                    Verdict::Unsupported,
                    format!("stream_options refused: {message}"),
                    "sessions leave stream_options out (saved); token counts only if sent anyway",
                );
                self.plan.push_front(Step::Stream(StreamOptions::Omit));
                return;
            }
        }
        if !(200..300).contains(&status) {
            let message = judge::error_message(&ex.body);
            self.set(
                Check::Streaming,
                Verdict::Failed,
                format!("{status}: {message}"),
                "",
            );
            self.after_stream();
            return;
        }
        self.auth_ok();
        if !ex.is_stream() {
            let verdict = match judge::chat_response(&ex.body) {
                Ok(_) => Verdict::Degraded,
                Err(_) => Verdict::Failed,
            };
            self.set(
                Check::Streaming,
                verdict,
                format!("stream: true ignored, answered whole ({})", ex.content_type),
                "hrns shows the answer when it is complete",
            );
            self.after_stream();
            return;
        }
        match &ex.stream_result {
            Some(Ok(completion)) => {
                let text = completion
                    .choices
                    .first()
                    .map(|c| c.content.clone())
                    .unwrap_or_default();
                let timing = judge::timing(ex, completion.usage.as_ref(), &text);
                let verdict = if text.trim().is_empty() {
                    Verdict::Degraded
                } else {
                    Verdict::Ok
                };
                self.set(Check::Streaming, verdict, timing, "");
                if options == StreamOptions::Send {
                    if completion.usage.is_some() {
                        self.set(
                            Check::StreamUsage,
                            Verdict::Ok,
                            "include_usage accepted and honoured",
                            "",
                        );
                    } else {
                        self.set(
                            Check::StreamUsage,
                            Verdict::Degraded,
                            "include_usage accepted, but no usage was sent",
                            "token counts are not shown for this provider",
                        );
                    }
                }
            }
            Some(Err(error)) => {
                self.set(Check::Streaming, Verdict::Failed, error.clone(), "");
            }
            None => {
                self.set(
                    Check::Streaming,
                    Verdict::Failed,
                    "the stream did not end",
                    "",
                );
            }
        }
        self.after_stream();
    }

    /// After the streamed chat: tools, unless neither chat worked.
    fn after_stream(&mut self) {
        let works = |p: &Probe, c: Check| {
            p.findings
                .get(&c)
                .is_some_and(|f| matches!(f.verdict, Verdict::Ok | Verdict::Degraded))
        };
        if !works(self, Check::Chat) && !works(self, Check::Streaming) {
            self.stop("chat does not work");
            return;
        }
        if !self.findings.contains_key(&Check::TokenLimitField) {
            self.set(
                Check::TokenLimitField,
                Verdict::Skipped,
                "not tried: the plain chat failed",
                "",
            );
        }
        self.plan.extend([
            Step::Tools,
            Step::ToolsStreamedAuto,
            Step::ToolsStreamed,
            Step::Parallel,
            Step::StructuredOutput,
        ]);
    }

    /// `response_format` with a JSON schema: refused by name (then sessions describe an
    /// output schema in the prompt instead), accepted and followed, or accepted and ignored.
    fn judge_structured(&mut self, ex: &Exchange) {
        let check = Check::StructuredOutput;
        if let Some(error) = &ex.error {
            return self.set(check, Verdict::Failed, judge::transport(error), "");
        }
        let status = ex.status.unwrap_or(0);
        let message = judge::error_message(&ex.body);
        if matches!(status, 400 | 422) {
            let raw = String::from_utf8_lossy(&ex.body);
            if let Some(("response_format", learned)) =
                self.quirks.learn_rejection_with_format(&[&message, &raw])
            {
                self.quirks = learned;
                return self.set(
                    check,
                    Verdict::Unsupported,
                    format!("response_format refused: {message}"),
                    "exec --output-schema puts the schema into the prompt instead (saved)",
                );
            }
        }
        if !(200..300).contains(&status) {
            return self.set(check, Verdict::Failed, format!("{status}: {message}"), "");
        }
        match judge::chat_response(&ex.body) {
            Ok(answer) => {
                let value = serde_json::from_str::<serde_json::Value>(answer.text.trim()).ok();
                let matched = value.as_ref().is_some_and(|v| {
                    v.as_object().is_some_and(|o| {
                        o.len() == 1 && o.get("city").is_some_and(serde_json::Value::is_string)
                    })
                });
                let shown = crate::text::shorten(answer.text.trim(), 60);
                if matched {
                    self.set(check, Verdict::Ok, format!("answered {shown}"), "");
                } else {
                    self.set(
                        check,
                        Verdict::Degraded,
                        format!("accepted, but the answer does not match: {shown:?}"),
                        "exec --output-schema checks answers itself and asks once more",
                    );
                }
            }
            Err(e) => self.set(check, Verdict::Failed, e, ""),
        }
    }

    fn judge_tools(&mut self, step: Step, ex: &Exchange) {
        let check = match step {
            Step::Tools => Check::Tools,
            Step::ToolsStreamedAuto => Check::ToolsStreamedAuto,
            Step::ToolsStreamed => Check::ToolsStreamed,
            _ => Check::ParallelToolCalls,
        };
        let judgement = judge::tool_answer(ex);
        if step == Step::ToolsStreamedAuto {
            self.streamed_auto = Some(judgement.clone());
        }
        let (verdict, detail, action) = match (&judgement, step) {
            (ToolJudgement::Calls(calls), Step::Parallel) if calls.len() >= 2 => (
                Verdict::Ok,
                format!("{} calls in one answer", calls.len()),
                String::new(),
            ),
            (ToolJudgement::Calls(calls), Step::Parallel) => (
                Verdict::Degraded,
                format!("{} call in the answer", calls.len()),
                "hrns runs one call per step: slower, same result".to_owned(),
            ),
            (ToolJudgement::Calls(calls), _) => judge::judge_calls(calls),
            (ToolJudgement::NoCall(text), _) => (
                Verdict::Degraded,
                format!(
                    "answered in text without a call: {:?}",
                    crate::text::shorten(text.trim(), 60)
                ),
                "the model may not use tools well; agents need them".to_owned(),
            ),
            (ToolJudgement::Rejected(message), _) => (
                Verdict::Unsupported,
                format!("tools refused: {message}"),
                "only plain chat works; pick a model with tool support".to_owned(),
            ),
            (ToolJudgement::Failed(message), _) => {
                (Verdict::Failed, message.clone(), String::new())
            }
        };
        self.findings.insert(
            check,
            Finding {
                check,
                verdict,
                detail,
                action,
            },
        );
        if step == Step::ToolsStreamed {
            self.learn_tool_choice(&judgement);
        }
    }

    /// Sessions send no `tool_choice`; when only `auto` gets tool calls, they send it.
    fn learn_tool_choice(&mut self, without: &ToolJudgement) {
        let auto_works =
            matches!(&self.streamed_auto, Some(ToolJudgement::Calls(c)) if !c.is_empty());
        let without_works = matches!(without, ToolJudgement::Calls(c) if !c.is_empty());
        if auto_works && !without_works {
            self.quirks.tool_choice = ToolChoice::Auto;
            if let Some(f) = self.findings.get_mut(&Check::ToolsStreamed) {
                f.action = "sessions send tool_choice: auto (saved)".to_owned();
            }
        }
    }

    /// The findings that sum up several requests.
    fn conclude(&mut self) {
        let fields: Vec<String> = self.reasoning_fields.iter().cloned().collect();
        let (verdict, detail, action) = match (fields.is_empty(), self.think_tags) {
            (_, true) => (
                Verdict::Degraded,
                "reasoning inside <think> tags in the answer text".to_owned(),
                "shown as part of the answer",
            ),
            (true, false) => (Verdict::Ok, "none seen".to_owned(), ""),
            (false, false) => (
                Verdict::Ok,
                fields.join(", "),
                "shown as reasoning and sent back with tool calls",
            ),
        };
        self.set(Check::Reasoning, verdict, detail, action);
        let quirks: Vec<&str> = self.stream_quirks.iter().copied().collect();
        if self
            .findings
            .get(&Check::Streaming)
            .is_some_and(|f| matches!(f.verdict, Verdict::Ok | Verdict::Degraded))
        {
            if quirks.is_empty() {
                self.set(Check::StreamQuirks, Verdict::Ok, "none", "");
            } else {
                self.set(
                    Check::StreamQuirks,
                    Verdict::Ok,
                    quirks.join("; "),
                    "absorbed by the stream accumulator",
                );
            }
        }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
