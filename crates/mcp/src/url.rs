//! An orchestra's address as the user gives it: `host:port` or `http://host:port`.

use crate::error::Error;

/// `host:port` → `http://host:port`, no trailing slash; anything but http:// is refused.
pub fn normalize_url(raw: &str) -> Result<String, Error> {
    let raw = raw.trim();
    let url = if raw.contains("://") {
        raw.to_string()
    } else {
        format!("http://{raw}")
    };
    if !url.starts_with("http://") || url.len() <= "http://".len() {
        return Err(Error::Url { url });
    }
    Ok(url.trim_end_matches('/').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_made_whole_and_only_http_is_taken() {
        assert_eq!(normalize_url("127.0.0.1:9/").unwrap(), "http://127.0.0.1:9");
        assert!(normalize_url("https://x").is_err());
        assert!(normalize_url("").is_err());
    }
}
