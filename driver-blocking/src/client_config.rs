//! [`ClientConfig`]: how a driver's HTTP client connects — timeouts, certificate checks, the
//! user agent. IO settings, so they live with the drivers (hrns-tokio uses this one too), not
//! in the sans-IO core.

use std::time::Duration;

/// Connection settings of a driver's client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientConfig {
    /// Longest wait for a connection (default 10 s).
    pub connect_timeout: Duration,
    /// Longest wait for the response head and, after it, for each piece of the body: a stream
    /// that stalls this long fails (default 300 s, as reasoning models can think quietly).
    pub read_idle_timeout: Duration,
    /// Accept any TLS certificate. Only for self-signed local servers; off by default.
    pub skip_verify: bool,
    /// The `User-Agent` header.
    pub user_agent: String,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            connect_timeout: Duration::from_secs(10),
            read_idle_timeout: Duration::from_secs(300),
            skip_verify: false,
            user_agent: format!("hrns/{}", env!("CARGO_PKG_VERSION")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_verifies_certificates_and_names_hrns() {
        let c = ClientConfig::default();
        assert!(!c.skip_verify);
        assert!(c.user_agent.starts_with("hrns/"));
    }
}
