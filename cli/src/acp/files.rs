//! The file tools' text through the editor: [`EditorFiles`] is the [`TextFiles`] the std
//! tools call on their blocking threads when the client offers `fs/read_text_file` and
//! `fs/write_text_file` (hrns_core::acp::client_fs says when, and what the answers mean).

use super::Outbound;
use hrns_core::acp::client_fs::{self, ClientFailure};
use hrns_tokio::TextFiles;
use std::path::Path;

/// One session's files in the editor.
#[derive(Debug)]
pub(crate) struct EditorFiles {
    pub(crate) out: Outbound,
    pub(crate) session_id: String,
    /// The runtime the requests wait on (the tools run on its blocking threads).
    pub(crate) runtime: tokio::runtime::Handle,
}

impl EditorFiles {
    fn ask(
        &self,
        method: &'static str,
        params: serde_json::Value,
    ) -> Result<serde_json::Value, ClientFailure> {
        self.runtime.block_on(
            self.out
                .request_within(method, params, client_fs::FS_TIMEOUT),
        )
    }
}

impl TextFiles for EditorFiles {
    fn read_text(&self, path: &Path) -> Result<String, String> {
        let params = client_fs::read_params(&self.session_id, &path.to_string_lossy());
        self.ask(client_fs::READ_TEXT_FILE, params)
            .and_then(client_fs::read_result)
            .map_err(|e| e.to_string())
    }

    fn write_text(&self, path: &Path, content: &str) -> Result<(), String> {
        let params = client_fs::write_params(&self.session_id, &path.to_string_lossy(), content);
        self.ask(client_fs::WRITE_TEXT_FILE, params)
            .map(drop)
            .map_err(|e| e.to_string())
    }
}
