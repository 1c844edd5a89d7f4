//! Durations as people write them in config: `500ms`, `10s`, `5m`, `1h`, `1d`, or a bare number of milliseconds.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::time::Duration;

/// A duration read from config text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Span(pub Duration);

impl Span {
    /// Milliseconds.
    pub fn as_millis(self) -> u64 {
        self.0.as_millis() as u64
    }
    /// A span of `ms` milliseconds.
    pub fn from_millis(ms: u64) -> Self {
        Span(Duration::from_millis(ms))
    }
    /// A span of `s` seconds.
    pub fn from_secs(s: u64) -> Self {
        Span(Duration::from_secs(s))
    }
}

/// Parses `500ms`, `10s`, `5m`, `1h`, `1d` or a bare number (milliseconds).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (e.g. 500ms, 10s, 5m, 1h, 1d)"))?;
    let ms = match unit.trim() {
        "" | "ms" => Some(n),
        "s" => n.checked_mul(1_000),
        "m" => n.checked_mul(60_000),
        "h" => n.checked_mul(3_600_000),
        "d" => n.checked_mul(86_400_000),
        other => {
            return Err(format!(
                "{text:?}: unknown unit {other:?} (use ms, s, m, h or d)"
            ));
        }
    };
    ms.map(Duration::from_millis)
        .ok_or_else(|| format!("{text:?} is too long"))
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.as_millis();
        if ms == 0 {
            return f.write_str("0s");
        }
        let units = [
            (86_400_000, "d"),
            (3_600_000, "h"),
            (60_000, "m"),
            (1_000, "s"),
            (1, "ms"),
        ];
        let (size, unit) = units
            .into_iter()
            .find(|(size, _)| ms.is_multiple_of(*size))
            .unwrap_or((1, "ms"));
        write!(f, "{}{unit}", ms / size)
    }
}

impl Serialize for Span {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Span {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Ms(u64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Ms(ms) => Ok(Span::from_millis(ms)),
            Raw::Text(t) => parse_duration(&t)
                .map(Span)
                .map_err(serde::de::Error::custom),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_usual_spellings() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("2d"), Ok(Duration::from_secs(172_800)));
        assert_eq!(parse_duration("250"), Ok(Duration::from_millis(250)));
        assert!(
            parse_duration("5 minutes")
                .unwrap_err()
                .contains("unknown unit")
        );
        assert!(parse_duration("m").is_err());
        assert!(parse_duration("99999999999999999999d").is_err());
    }

    #[test]
    fn display_round_trips() {
        for t in ["90s", "5m", "1h", "1d", "250ms", "0s"] {
            assert_eq!(Span(parse_duration(t).unwrap()).to_string(), t);
        }
    }
}
