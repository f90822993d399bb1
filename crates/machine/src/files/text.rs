//! Text helpers: MIME types (§8.2), sizes, the `cat -n` gutter (§8.1),
//! result truncation, the listing sort order and a lenient base64 decoder.

use std::cmp::Ordering;

/// Lines longer than this many characters are split into `N`, `N.1`, … rows.
pub const MAX_LINE_LENGTH: usize = 5000;
/// Width of the right-aligned line-number gutter.
pub const LINE_NUMBER_WIDTH: usize = 6;
/// `ls`/`glob`/`grep` results above this many characters are cut.
pub const RESULT_LIMIT_CHARS: usize = 80_000;
/// The line that ends a cut `ls`/`glob`/`grep` result.
pub const TRUNCATION_GUIDANCE: &str =
    "... [results truncated, try being more specific with your parameters]";
/// `read_file` on an empty (or whitespace-only) file.
pub const EMPTY_CONTENT_WARNING: &str = "System reminder: File exists but has empty contents";

/// The MIME type of a path, from its extension (text/plain when unknown).
///
/// The extension runs from the last dot of the last segment; a leading dot
/// (`.env`) is not an extension. Case-insensitive.
pub fn mime_of(path: &str) -> &'static str {
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = match name.rfind('.') {
        Some(i) if i > 0 => name[i + 1..].to_ascii_lowercase(),
        _ => return "text/plain",
    };
    match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        "heic" => "image/heic",
        "heif" => "image/heif",
        "mp3" => "audio/mpeg",
        "wav" => "audio/wav",
        "aiff" => "audio/aiff",
        "aac" => "audio/aac",
        "ogg" => "audio/ogg",
        "flac" => "audio/flac",
        "mp4" => "video/mp4",
        "webm" => "video/webm",
        "mpeg" | "mpg" => "video/mpeg",
        "mov" => "video/quicktime",
        "avi" => "video/x-msvideo",
        "flv" => "video/x-flv",
        "wmv" => "video/x-ms-wmv",
        "3gpp" => "video/3gpp",
        "pdf" => "application/pdf",
        "ppt" => "application/vnd.ms-powerpoint",
        "pptx" => "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "json" => "application/json",
        "js" | "mjs" | "cjs" => "application/javascript",
        "md" | "markdown" => "text/markdown",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "xml" => "text/xml",
        _ => "text/plain",
    }
}

/// True for the MIME types read as text (§8.2).
pub fn is_text_mime(mime: &str) -> bool {
    mime.starts_with("text/")
        || mime == "application/json"
        || mime == "application/javascript"
        || mime == "image/svg+xml"
}

/// True when a path's extension makes it binary-typed.
pub fn is_binary_path(path: &str) -> bool {
    !is_text_mime(mime_of(path))
}

/// A byte count as §8.2 prints it: `12 B`, `24.1 KB`, `3.0 MB`.
pub fn format_size(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * 1024;
    if bytes < KIB {
        format!("{bytes} B")
    } else if bytes < MIB {
        format!("{:.1} KB", bytes as f64 / KIB as f64)
    } else {
        format!("{:.1} MB", bytes as f64 / MIB as f64)
    }
}

/// The binary refusal text of §8.2 (without the `Error: ` prefix).
pub fn binary_refusal(rel: &str, mime: &str, size: Option<u64>) -> String {
    let detail = match size {
        Some(n) => format!("{mime}, {}", format_size(n)),
        None => mime.to_string(),
    };
    format!(
        "'{rel}' is a binary file ({detail}) and was not read; read_file returns text files only."
    )
}

/// True when the content counts as empty (JS `trim()`: whitespace and BOM).
pub fn is_blank(text: &str) -> bool {
    text.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
        .is_empty()
}

/// `cat -n` rendering of `lines`, numbered from `start` (1-based).
pub fn format_numbered(lines: &[&str], start: usize) -> String {
    let mut rows: Vec<String> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let num = i + start;
        let chars: Vec<char> = line.chars().collect();
        if chars.len() <= MAX_LINE_LENGTH {
            rows.push(format!("{num:>LINE_NUMBER_WIDTH$}\t{line}"));
            continue;
        }
        for (chunk_idx, chunk) in chars.chunks(MAX_LINE_LENGTH).enumerate() {
            let marker = if chunk_idx == 0 {
                num.to_string()
            } else {
                format!("{num}.{chunk_idx}")
            };
            let text: String = chunk.iter().collect();
            rows.push(format!("{marker:>LINE_NUMBER_WIDTH$}\t{text}"));
        }
    }
    rows.join("\n")
}

/// Deep Agents' `truncateIfTooLong` over result lines: when the lines hold more
/// than [`RESULT_LIMIT_CHARS`] characters, keep the same proportion of lines and
/// append [`TRUNCATION_GUIDANCE`]. Returns the lines joined with `\n`.
pub fn truncate_lines(lines: Vec<String>) -> String {
    let total: usize = lines.iter().map(|l| l.chars().count()).sum();
    if total <= RESULT_LIMIT_CHARS {
        return lines.join("\n");
    }
    let keep = lines.len() * RESULT_LIMIT_CHARS / total;
    let mut kept: Vec<String> = lines.into_iter().take(keep).collect();
    kept.push(TRUNCATION_GUIDANCE.to_string());
    kept.join("\n")
}

/// Sort rank of ASCII punctuation in the ICU root collation (what JS
/// `localeCompare` uses); everything here sorts before digits and letters.
const PUNCT_ORDER: &str = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";

fn primary_key(c: char) -> (u8, u32) {
    if let Some(i) = PUNCT_ORDER.find(c) {
        return (0, i as u32);
    }
    if c.is_ascii_digit() {
        return (1, c as u32);
    }
    if c.is_ascii_alphabetic() {
        return (2, c.to_ascii_lowercase() as u32);
    }
    if c.is_ascii() {
        return (0, 100 + c as u32);
    }
    let lower = c.to_lowercase().next().unwrap_or(c);
    (3, lower as u32)
}

/// An approximation of JS `a.localeCompare(b)` (ICU root collation) for path
/// sorting: punctuation < digits < letters, case-insensitive first, then
/// lowercase before uppercase, then code points.
pub fn locale_cmp(a: &str, b: &str) -> Ordering {
    let pa = a.chars().map(primary_key);
    let pb = b.chars().map(primary_key);
    match pa.cmp(pb) {
        Ordering::Equal => {}
        other => return other,
    }
    let tertiary = |c: char| u8::from(c.is_uppercase());
    match a.chars().map(tertiary).cmp(b.chars().map(tertiary)) {
        Ordering::Equal => a.cmp(b),
        other => other,
    }
}

/// Lenient base64 decoding (Node `Buffer.from(s, "base64")`): a `data:` URL
/// prefix is dropped, characters outside the alphabets (standard and URL-safe)
/// are skipped, decoding stops at `=`.
pub fn decode_base64(input: &str) -> Vec<u8> {
    let trimmed = input.trim();
    let payload = if trimmed.starts_with("data:") {
        trimmed.split_once(',').map_or("", |(_, rest)| rest)
    } else {
        trimmed
    };
    let mut out = Vec::with_capacity(payload.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0u32;
    for b in payload.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => break,
            _ => continue,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(((acc >> bits) & 0xff) as u8);
        }
    }
    out
}
