//! `@path` mentions: the files are looked up inside the workspace and read here; which words are
//! mentions and how the message is built is decided in [`hrns_core::mention`].

use base64::Engine as _;
use hrns_blocking::SafeReadError;
use hrns_core::mention::{self, Attachment, MAX_IMAGE_BYTES, MAX_TEXT_BYTES};
use hrns_core::tool::protect::{FileAccess, ProtectedPaths};
use hrns_core::wire::Message;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The file `path` names, if it is a file in or under `workspace` (links resolved first, so a
/// link out of the workspace does not count).
pub(crate) fn resolve(workspace: &Path, path: &str) -> Option<PathBuf> {
    let full = workspace.join(path).canonicalize().ok()?;
    (full.starts_with(workspace) && full.is_file()).then_some(full)
}

/// The user message for `prompt` with every mentioned file attached, and what was attached (for
/// the user to see). A prompt without mentions gives a plain text message. A file below
/// hrns's own config or state (`protected`, by its real path) is refused, never read: the
/// workspace may contain them (`$HOME`), and they hold the keys.
pub(crate) fn expand(
    prompt: &str,
    workspace: &Path,
    protected: &ProtectedPaths,
) -> (Message, Vec<Attachment>) {
    let found = mention::find_mentions(prompt, |p| resolve(workspace, p).is_some());
    let mut attachments: Vec<Attachment> = Vec::new();
    for m in found {
        if attachments.iter().any(|a| a.path() == m.path) {
            continue;
        }
        if let Some(full) = resolve(workspace, &m.path) {
            let attachment = match protected.check(FileAccess::Read, &full) {
                Ok(()) => read(&m.path, &full),
                Err(why) => Attachment::Refused {
                    path: m.path.clone(),
                    reason: why.reason().to_owned(),
                },
            };
            attachments.push(attachment);
        }
    }
    (mention::attach(prompt, &attachments), attachments)
}

/// [`expand`] with the images of `exec -i FILE` attached too (after the mentioned files, each
/// once). Those are named by the user on the command line, so they may be anywhere; one that
/// cannot be read or is not a png, jpeg, gif or webp image is an error naming it.
pub(crate) fn expand_with_images(
    prompt: &str,
    workspace: &Path,
    protected: &ProtectedPaths,
    images: &[PathBuf],
) -> Result<(Message, Vec<Attachment>), String> {
    let (message, mut attachments) = expand(prompt, workspace, protected);
    if images.is_empty() {
        return Ok((message, attachments));
    }
    for path in images {
        let shown = path.display().to_string();
        let (bytes, total) = read_head(path, MAX_IMAGE_BYTES + 1)
            .map_err(|e| format!("--image {shown}: cannot read it: {e}"))?;
        if total > MAX_IMAGE_BYTES as u64 {
            return Err(format!(
                "--image {shown}: larger than {} MiB",
                MAX_IMAGE_BYTES / (1024 * 1024)
            ));
        }
        let media_type = mention::image_type(&bytes)
            .ok_or_else(|| format!("--image {shown}: not a png, jpeg, gif or webp image"))?;
        if attachments.iter().any(|a| a.path() == shown) {
            continue;
        }
        attachments.push(Attachment::Image {
            path: shown,
            media_type,
            base64: base64::engine::general_purpose::STANDARD.encode(&bytes),
        });
    }
    Ok((mention::attach(prompt, &attachments), attachments))
}

/// Reads one mentioned file: an image by its name and signature, else text, else refused.
fn read(path: &str, full: &Path) -> Attachment {
    let refused = |reason: String| Attachment::Refused {
        path: path.to_owned(),
        reason,
    };
    let image = mention::has_image_extension(path);
    let limit = if image {
        MAX_IMAGE_BYTES + 1
    } else {
        MAX_TEXT_BYTES + 4
    };
    let (bytes, total) = match read_head(full, limit) {
        Ok(read) => read,
        Err(SafeReadError::Refused { refusal, .. }) => return refused(refusal.to_string()),
        Err(e) => return refused(format!("cannot read it: {e}")),
    };
    if image {
        if total > MAX_IMAGE_BYTES as u64 {
            return refused(format!(
                "an image larger than {} MiB",
                MAX_IMAGE_BYTES / (1024 * 1024)
            ));
        }
        return match mention::image_type(&bytes) {
            Some(media_type) => Attachment::Image {
                path: path.to_owned(),
                media_type,
                base64: base64::engine::general_purpose::STANDARD.encode(&bytes),
            },
            None => refused("named like an image, but not a png, jpeg, gif or webp file".into()),
        };
    }
    match mention::text_of(&bytes, total) {
        Some(text) => Attachment::Text {
            path: path.to_owned(),
            text,
            total,
        },
        None => refused("a binary file; hrns attaches text files and images only".into()),
    }
}

/// The first `limit` bytes of a file and its size; only a regular file is read, opened without
/// blocking (a FIFO or device mentioned by name is refused).
fn read_head(path: &Path, limit: usize) -> Result<(Vec<u8>, u64), SafeReadError> {
    let (file, total) = hrns_blocking::open_regular(path)?;
    let mut bytes = Vec::new();
    file.take(limit as u64)
        .read_to_end(&mut bytes)
        .map_err(|source| SafeReadError::Io {
            path: path.to_owned(),
            source,
        })?;
    let total = total.max(bytes.len() as u64);
    Ok((bytes, total))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrns_core::wire::Content;

    #[test]
    fn only_files_inside_the_workspace_are_attached() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let ws = root.join("ws");
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::write(ws.join("src/a.rs"), "fn a() {}\n").unwrap();
        std::fs::write(root.join("secret.txt"), "outside").unwrap();
        std::os::unix::fs::symlink(root.join("secret.txt"), ws.join("link.txt")).unwrap();
        assert!(resolve(&ws, "src/a.rs").is_some());
        assert!(resolve(&ws, "../secret.txt").is_none());
        assert!(resolve(&ws, root.join("secret.txt").to_str().unwrap()).is_none());
        assert!(resolve(&ws, "link.txt").is_none());
        assert!(resolve(&ws, "src").is_none(), "a directory is not a file");
        let (message, attached) = expand(
            "read @src/a.rs and @../secret.txt and @link.txt, @src/a.rs",
            &ws,
            &ProtectedPaths::default(),
        );
        assert_eq!(attached.len(), 1, "once each, inside only: {attached:?}");
        let text = message.text();
        assert!(text.contains("src/a.rs:\n```\nfn a() {}\n```"), "{text}");
        assert!(!text.contains("outside"));
    }

    #[test]
    fn hrns_own_files_are_refused_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().canonicalize().unwrap();
        let config = home.join(".config/hrns/config.json");
        std::fs::create_dir_all(config.parent().unwrap()).unwrap();
        std::fs::write(&config, r#"{"key": "sk-MENTIONED-SECRET"}"#).unwrap();
        std::os::unix::fs::symlink(&config, home.join("alias.json")).unwrap();
        let protected = ProtectedPaths::new(
            vec![home.join(".config/hrns")],
            Vec::new(),
            hrns_core::tool::protect::GitWrites::Refused,
        );
        let (message, attached) = expand(
            "see @.config/hrns/config.json and @alias.json",
            &home,
            &protected,
        );
        assert_eq!(attached.len(), 2, "{attached:?}");
        for a in &attached {
            assert!(
                matches!(a, Attachment::Refused { reason, .. } if reason.contains("hrns's own configuration")),
                "{a:?}"
            );
        }
        assert!(!message.text().contains("sk-MENTIONED-SECRET"));
    }

    #[test]
    fn images_binaries_and_impostors() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        std::fs::write(ws.join("p.png"), b"\x89PNG\r\n\x1a\n\0\0").unwrap();
        std::fs::write(ws.join("fake.png"), b"not a picture").unwrap();
        std::fs::write(ws.join("data.bin"), b"\0\x01\x02").unwrap();
        let (message, attached) = expand(
            "@p.png @fake.png @data.bin",
            &ws,
            &ProtectedPaths::default(),
        );
        let summaries: Vec<String> = attached.iter().map(Attachment::summary).collect();
        assert_eq!(
            summaries,
            [
                "attached p.png as an image (image/png)",
                "not attached: fake.png: named like an image, but not a png, jpeg, gif or webp file",
                "not attached: data.bin: a binary file; hrns attaches text files and images only",
            ]
        );
        let Some(Content::Parts(parts)) = message.content else {
            panic!("an image makes content parts");
        };
        assert_eq!(
            parts[1]["image_url"]["url"],
            "data:image/png;base64,iVBORw0KGgoAAA=="
        );
    }
}
