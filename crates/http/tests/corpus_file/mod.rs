//! The corpus files' format (tests/corpus/*.txt): an entry starts with `=== <expected>
//! <name>`; the lines up to the next entry are joined without line breaks and unescaped
//! (`\r \n \t \\ \xNN`, and `{{N*text}}` for text repeated N times, expanded first); lines
//! starting with `#` and empty lines are comments. scripts/http-corpus-lib.mjs reads the same.

/// One entry: what is expected of it (a status, a verdict), its name, its bytes.
pub struct Entry {
    pub name: String,
    pub expected: String,
    pub bytes: Vec<u8>,
}

fn expand_repeats(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("}}").expect("closing }}") + start;
        let (n, text) = rest[start + 2..end].split_once('*').expect("{{N*text}}");
        out.push_str(&text.repeat(n.parse().expect("a count")));
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out
}

fn unescape(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        match b[i + 1] {
            b'r' => out.push(b'\r'),
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'\\' => out.push(b'\\'),
            b'x' => {
                let hex = std::str::from_utf8(&b[i + 2..i + 4]).unwrap();
                out.push(u8::from_str_radix(hex, 16).unwrap());
                i += 2;
            }
            other => panic!("unknown escape \\{}", other as char),
        }
        i += 2;
    }
    out
}

/// The entries of a corpus file's text.
pub fn entries(text: &str) -> Vec<Entry> {
    let mut entries: Vec<Entry> = Vec::new();
    for line in text.lines() {
        if let Some(head) = line.strip_prefix("=== ") {
            let (expected, name) = head.split_once(' ').expect("=== <expected> <name>");
            entries.push(Entry {
                name: name.to_string(),
                expected: expected.to_string(),
                bytes: Vec::new(),
            });
        } else if line.starts_with('#') || line.is_empty() {
            continue;
        } else {
            let e = entries.last_mut().expect("an entry header first");
            e.bytes.extend(unescape(&expand_repeats(line)));
        }
    }
    entries
}
