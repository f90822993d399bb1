//! Showing the model the images it reads (`createAgent({ images })`).
//!
//! `read_file` answers text only: a binary file is refused with a notice. With image reads
//! on, the agent's `read_file` of a PNG, JPEG, GIF or WebP answers one line,
//! `Image '<path>' (<type>, <size>) is shown below.`, and its tool message records the path
//! (`"image": { path, mimeType }` in the transcript, never sent). Before every model call the
//! image is read again and added to the *request* as a `user` message right after that batch
//! of tool results, so the bytes never enter the transcript, an event or a checkpoint. The
//! most recent `keep` images stay attached; an older one, and one gone since, is named in
//! text instead.

use base64::Engine;
use serde_json::{Value, json};

use crate::files::Workspace;
use crate::files::text::{format_size, mime_of};
use crate::model::{ChatMessage, ContentPart, ImageUrl, MessageContent};

/// The largest image sent by default: 10 MB, as Deep Agents' `read_file`.
pub const DEFAULT_MAX_BYTES: u64 = 10 * 1024 * 1024;

/// The `images` option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageReads {
    /// The largest image sent to the model, in bytes.
    pub max_bytes: u64,
    /// How many of the images read stay attached on a later call, the most recent first.
    pub keep: usize,
}

impl Default for ImageReads {
    fn default() -> Self {
        ImageReads {
            max_bytes: DEFAULT_MAX_BYTES,
            keep: usize::MAX,
        }
    }
}

/// What a tool message records about the image it showed (never the bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageMark {
    /// The canonical workspace path.
    pub path: String,
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub mime: &'static str,
}

impl ImageMark {
    /// The transcript's record: `{ path, mimeType }`.
    pub fn to_value(&self) -> Value {
        json!({ "path": self.path, "mimeType": self.mime })
    }

    /// The mark a stored tool message carries, if any.
    pub fn of(message: &Value) -> Option<ImageMark> {
        let mark = message.get("image")?;
        let path = mark.get("path")?.as_str()?;
        let mime = shown_mime(path)?;
        Some(ImageMark {
            path: path.to_string(),
            mime,
        })
    }
}

/// The MIME type of a path the model may be shown, by extension.
fn shown_mime(path: &str) -> Option<&'static str> {
    let mime = mime_of(path);
    matches!(
        mime,
        "image/png" | "image/jpeg" | "image/gif" | "image/webp"
    )
    .then_some(mime)
}

/// An image's bytes, through the workspace's own routing and `read_file`'s refusals.
fn read(ws: &Workspace, path: &str) -> Option<(String, Vec<u8>)> {
    let route = crate::files::route::resolve(ws, path).ok()?;
    if route.rel.is_empty() {
        return None;
    }
    let bytes = crate::files::tools::read_bytes(&route).ok()?;
    Some((route.rel, bytes))
}

/// An image a tool answered (an MCP tool's image content, base64), kept in the session's
/// `large_tool_results/` as `<call>_<n>.<ext>` so the next request shows it as `read_file`'s
/// are shown: the sentence for the model and the mark, or why it is not shown.
pub fn keep_answered(
    ws: &Workspace,
    call_id: &str,
    n: usize,
    mime: &str,
    data: &str,
    opts: &ImageReads,
) -> (String, Option<ImageMark>) {
    let ext = match mime {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        other => {
            return (
                format!("[an image ({other}) was returned; it cannot be shown]"),
                None,
            );
        }
    };
    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(data.trim()) else {
        return (
            "[an image was returned, but its data is not base64]".to_string(),
            None,
        );
    };
    let size = format_size(bytes.len() as u64);
    if bytes.len() as u64 > opts.max_bytes {
        return (
            format!(
                "[an image ({mime}, {size}) was returned; images over {} are not sent to the model]",
                format_size(opts.max_bytes)
            ),
            None,
        );
    }
    let rel = format!(
        "{}/{}_{n}.{ext}",
        crate::files::LARGE_TOOL_RESULTS_DIR,
        crate::files::sanitize_call_id(call_id)
    );
    let base = ws.session.parent().unwrap_or(&ws.session);
    if let Err(e) = ws
        .files
        .write_confined(base, &ws.session.join(&rel), &bytes)
    {
        return (
            format!("[an image ({mime}, {size}) was returned but could not be kept: {e}]"),
            None,
        );
    }
    (
        format!("Image '{rel}' ({mime}, {size}) is shown below."),
        shown_mime(&rel).map(|mime| ImageMark { path: rel, mime }),
    )
}

/// The agent's `read_file` with image reads on: the answer and the mark for an image it may
/// be shown, or `None` to let `read_file` answer (not an image, missing, a symlink, …).
pub fn answer(
    ws: &Workspace,
    args: &Value,
    opts: &ImageReads,
) -> Option<(String, Option<ImageMark>)> {
    let given = args
        .get("file_path")
        .and_then(Value::as_str)
        .or_else(|| args.get("path").and_then(Value::as_str))?;
    let mime = shown_mime(given)?;
    let (path, bytes) = read(ws, given)?;
    let size = format_size(bytes.len() as u64);
    if bytes.len() as u64 > opts.max_bytes {
        return Some((
            format!(
                "Image '{path}' ({mime}, {size}) was not shown: images over {} are not sent to the model.",
                format_size(opts.max_bytes)
            ),
            None,
        ));
    }
    Some((
        format!("Image '{path}' ({mime}, {size}) is shown below."),
        Some(ImageMark { path, mime }),
    ))
}

/// The request's messages with each batch's images added after it. `marks` are
/// `(index in messages, mark)` in order.
pub fn with_images(
    ws: Option<&Workspace>,
    messages: &[ChatMessage],
    marks: &[(usize, ImageMark)],
    opts: &ImageReads,
) -> Vec<ChatMessage> {
    let first_attached = marks.len().saturating_sub(opts.keep);
    let mut out = Vec::with_capacity(messages.len() + marks.len());
    let mut batch: Vec<(&ImageMark, bool)> = Vec::new();
    let mut next = marks.iter().enumerate().peekable();
    for (i, message) in messages.iter().enumerate() {
        out.push(message.clone());
        while let Some((ordinal, (_, mark))) = next.next_if(|(_, (at, _))| *at == i) {
            batch.push((mark, ordinal >= first_attached));
        }
        let is_tool = |m: Option<&ChatMessage>| matches!(m, Some(ChatMessage::Tool { .. }));
        if is_tool(Some(message)) && !is_tool(messages.get(i + 1)) && !batch.is_empty() {
            out.push(image_message(ws, &batch, opts));
            batch.clear();
        }
    }
    out
}

/// The user message carrying one batch's images, or what stands in for each.
fn image_message(
    ws: Option<&Workspace>,
    batch: &[(&ImageMark, bool)],
    opts: &ImageReads,
) -> ChatMessage {
    let mut parts = Vec::new();
    for (mark, attach) in batch {
        let path = &mark.path;
        if !attach {
            parts.push(ContentPart::text(format!(
                "Image '{path}' was shown earlier and is no longer attached; read it again to see it."
            )));
            continue;
        }
        match ws.and_then(|ws| read(ws, path)) {
            None => parts.push(ContentPart::text(format!(
                "Image '{path}', read earlier, is no longer available: it does not exist."
            ))),
            Some((_, bytes)) if bytes.len() as u64 > opts.max_bytes => {
                parts.push(ContentPart::text(format!(
                    "Image '{path}' is now larger than {} and is not shown.",
                    format_size(opts.max_bytes)
                )));
            }
            Some((_, bytes)) => {
                parts.push(ContentPart::text(format!("Image '{path}':")));
                let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
                parts.push(ContentPart::ImageUrl {
                    image_url: ImageUrl {
                        url: format!("data:{};base64,{data}", mark.mime),
                    },
                });
            }
        }
    }
    ChatMessage::User {
        content: MessageContent::Parts(parts),
    }
}
