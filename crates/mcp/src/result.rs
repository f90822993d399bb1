//! A tool result as a model sees it: the text, the images, the structured value.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::Value;

/// One image of a result, as the MCP server sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageItem {
    /// `image/png`, `image/jpeg`, ...
    pub mime_type: String,
    /// The image, base64.
    pub data: String,
}

/// The result of a `tools/call`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CallResult {
    /// The text items joined by a line break; a resource link is named
    /// (`[resource: <name> <uri>]`), an embedded text resource is included under
    /// its URI, audio and binary resources are named. When the result holds no
    /// text at all, the structured content serialized.
    pub text: String,
    /// The image items, in order.
    pub images: Vec<ImageItem>,
    /// `structuredContent`, when the server sent it.
    pub structured: Option<Value>,
    /// The server's `isError`: the tool ran and failed (the text says why).
    pub is_error: bool,
}

impl CallResult {
    pub(crate) fn from_mcp(result: CallToolResult) -> CallResult {
        let mut parts: Vec<String> = Vec::new();
        let mut images = Vec::new();
        for block in result.content {
            match block {
                ContentBlock::Text(t) => parts.push(t.text),
                ContentBlock::Image(i) => images.push(ImageItem {
                    mime_type: i.mime_type,
                    data: i.data,
                }),
                ContentBlock::Audio(a) => {
                    parts.push(format!(
                        "[audio: {}, {} bytes of base64]",
                        a.mime_type,
                        a.data.len()
                    ));
                }
                ContentBlock::ResourceLink(r) => {
                    parts.push(format!("[resource: {} {}]", r.name, r.uri));
                }
                ContentBlock::Resource(e) => parts.push(match e.resource {
                    ResourceContents::TextResourceContents { uri, text, .. } => {
                        format!("[resource: {uri}]\n{text}")
                    }
                    ResourceContents::BlobResourceContents {
                        uri,
                        mime_type,
                        blob,
                        ..
                    } => format!(
                        "[resource: {uri} ({}, {} bytes of base64)]",
                        mime_type.as_deref().unwrap_or("binary"),
                        blob.len()
                    ),
                    _ => "[resource of an unknown kind]".to_string(),
                }),
                _ => parts.push("[content of an unknown kind]".to_string()),
            }
        }
        let structured = result.structured_content;
        let text = if parts.is_empty() {
            structured
                .as_ref()
                .map(Value::to_string)
                .unwrap_or_default()
        } else {
            parts.join("\n")
        };
        CallResult {
            text,
            images,
            structured,
            is_error: result.is_error.unwrap_or(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> CallResult {
        CallResult::from_mcp(serde_json::from_value(v).unwrap())
    }

    #[test]
    fn maps_every_kind_of_content() {
        let r = map(json!({
            "content": [
                {"type": "text", "text": "one"},
                {"type": "image", "data": "iVBOR", "mimeType": "image/png"},
                {"type": "resource_link", "uri": "test://static/1", "name": "Resource 1"},
                {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "hello"}},
                {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAAA", "mimeType": "application/gzip"}},
                {"type": "audio", "data": "AAAAAAAA", "mimeType": "audio/wav"},
                {"type": "text", "text": "two"}
            ],
            "isError": true
        }));
        assert_eq!(
            r.text,
            "one\n[resource: Resource 1 test://static/1]\n[resource: file:///a.txt]\nhello\n[resource: file:///b.bin (application/gzip, 4 bytes of base64)]\n[audio: audio/wav, 8 bytes of base64]\ntwo"
        );
        assert_eq!(
            r.images,
            [ImageItem {
                mime_type: "image/png".into(),
                data: "iVBOR".into()
            }]
        );
        assert!(r.is_error);
        assert_eq!(r.structured, None);
    }

    #[test]
    fn structured_content_stands_in_for_missing_text() {
        let r = map(json!({"content": [], "structuredContent": {"t": 1}}));
        assert_eq!(r.text, r#"{"t":1}"#);
        assert_eq!(r.structured, Some(json!({"t": 1})));
        assert!(!r.is_error);
        let r =
            map(json!({"content": [{"type": "text", "text": "x"}], "structuredContent": {"t": 1}}));
        assert_eq!(r.text, "x");
        assert_eq!(map(json!({"content": []})).text, "");
    }
}
