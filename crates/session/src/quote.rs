//! How answers and the log show a client's text.

/// `text` in double quotes, as answers and the log show a client's text: every character XML
/// 1.0 forbids (control characters but tab, newline and carriage return; U+FFFE, U+FFFF)
/// replaced by U+FFFD, as the encoder would, and never shown as a Rust escape.
pub(crate) fn quoted(text: &str) -> String {
    let shown: String = text
        .chars()
        .map(|c| {
            if (c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
                || matches!(c, '\u{fffe}' | '\u{ffff}')
            {
                '\u{fffd}'
            } else {
                c
            }
        })
        .collect();
    format!("\"{shown}\"")
}
