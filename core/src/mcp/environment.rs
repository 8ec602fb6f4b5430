//! The environment an MCP server process gets: the user's, without secrets, plus the server's
//! own `env`.
//!
//! A minimal rule until the sandbox's environment policy lands on main (then this should call
//! it): variables whose names contain `KEY`, `SECRET`, `TOKEN`, `PASSWORD`, `PASSWD` or
//! `CREDENTIAL` (any case) are withheld, as for `run_command` in the design. A server that
//! needs one gets it through its `env` in the configuration.

use std::collections::BTreeMap;

/// Name parts that mark a variable as a secret.
const SECRET_MARKERS: [&str; 6] = ["KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL"];

/// Whether a variable of this name is withheld from server processes.
pub fn is_withheld(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_MARKERS.iter().any(|marker| upper.contains(marker))
}

/// The environment of a server process: `inherited` without withheld variables, then `own`
/// (which wins, secrets included: the user put them there for this server).
pub fn server_environment(
    inherited: impl IntoIterator<Item = (String, String)>,
    own: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = inherited
        .into_iter()
        .filter(|(name, _)| !is_withheld(name))
        .collect();
    env.extend(own.iter().map(|(k, v)| (k.clone(), v.clone())));
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_withheld_and_own_variables_win() {
        let inherited = [
            ("PATH", "/bin"),
            ("OPENAI_API_KEY", "sk"),
            ("github_token", "t"),
            ("DB_PASSWORD", "p"),
            ("AWS_SECRET_ACCESS_KEY", "a"),
            ("HOME", "/h"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()));
        let own = [
            ("GITHUB_TOKEN".to_owned(), "mine".to_owned()),
            ("HOME".to_owned(), "/x".to_owned()),
        ]
        .into();
        let env = server_environment(inherited, &own);
        let names: Vec<&str> = env.keys().map(String::as_str).collect();
        assert_eq!(names, ["GITHUB_TOKEN", "HOME", "PATH"]);
        assert_eq!(env["HOME"], "/x");
    }
}
