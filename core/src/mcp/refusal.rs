//! What the model reads when an MCP tool call cannot reach its server: the driver only says
//! which case it met, the sentences live here with the rest of the loop's words.

use crate::tool::ToolOutput;
use serde_json::Value;

/// The arguments of a call to `tool`, which MCP requires to be a JSON object; anything else
/// is answered with an error the model can correct.
pub fn call_arguments(tool: &str, arguments: &str) -> Result<Value, ToolOutput> {
    match serde_json::from_str(arguments) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) | Err(_) => Err(ToolOutput::error(format!(
            "The arguments of {tool} must be a JSON object."
        ))),
    }
}

/// The result of a call to a tool of `server`, which is not running (it failed to start, or
/// stopped).
pub fn server_not_running(server: &str) -> ToolOutput {
    ToolOutput::error(format!("The MCP server {server} is not running."))
}

/// The result of a call the client refused to send (`why` says what the client met).
pub fn call_not_sent(why: &dyn std::fmt::Display) -> ToolOutput {
    ToolOutput::error(format!("The MCP tool could not be called: {why}."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_object_is_a_calls_arguments() {
        assert_eq!(
            call_arguments("mcp__box__look", r#"{"a": 1}"#).unwrap(),
            serde_json::json!({"a": 1})
        );
        for bad in ["[1]", "\"text\"", "null", "{\"a\":", ""] {
            let refused = call_arguments("mcp__box__look", bad).unwrap_err();
            assert!(refused.is_error, "{bad}");
            assert!(refused.content.contains("mcp__box__look"), "{bad}");
            assert!(refused.content.contains("JSON object"), "{bad}");
        }
    }
}
