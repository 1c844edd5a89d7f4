//! Per-broker API versions (ApiVersions) and the choice of a version per API: the highest version both mqwatch
//! (kafka-protocol's range, optionally capped by the caller) and the broker support. A broker lacking one API, or
//! one version, degrades that API only: never the cluster, never the other APIs.

use kafka_protocol::messages::ApiVersionsResponse;
use kafka_protocol::protocol::VersionRange;
use std::collections::HashMap;

/// What one broker said it supports, by API key.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BrokerVersions {
    ranges: HashMap<i16, VersionRange>,
}

impl BrokerVersions {
    /// The table of an ApiVersions response.
    pub fn from_response(r: &ApiVersionsResponse) -> Self {
        Self {
            ranges: r
                .api_keys
                .iter()
                .map(|k| {
                    (
                        k.api_key,
                        VersionRange {
                            min: k.min_version,
                            max: k.max_version,
                        },
                    )
                })
                .collect(),
        }
    }

    /// A table from `(api key, min, max)` triples (for tests and scripted brokers).
    pub fn from_ranges(ranges: impl IntoIterator<Item = (i16, i16, i16)>) -> Self {
        Self {
            ranges: ranges
                .into_iter()
                .map(|(k, min, max)| (k, VersionRange { min, max }))
                .collect(),
        }
    }

    /// The broker's range for `api_key`, if it lists the API.
    pub fn range(&self, api_key: i16) -> Option<VersionRange> {
        self.ranges.get(&api_key).copied()
    }

    /// The highest version of `api_key` in both `ours` and the broker's range.
    pub fn pick(&self, api_key: i16, ours: VersionRange) -> Result<i16, (String, Option<String>)> {
        let Some(theirs) = self.range(api_key) else {
            return Err((ours.to_string(), None));
        };
        let both = ours.intersect(&theirs);
        if both.is_empty() {
            return Err((ours.to_string(), Some(theirs.to_string())));
        }
        Ok(both.max)
    }
}

/// `ours` with its maximum lowered to `cap` (a version whose request shape the caller builds), if given.
pub fn capped(ours: VersionRange, cap: Option<i16>) -> VersionRange {
    match cap {
        Some(c) => VersionRange {
            min: ours.min,
            max: ours.max.min(c),
        },
        None => ours,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_highest_common_version_per_api() {
        let b = BrokerVersions::from_ranges([(3, 0, 9), (2, 0, 7), (15, 0, 5)]);
        let ours = VersionRange { min: 1, max: 10 };
        assert_eq!(b.pick(2, ours), Ok(7));
        assert_eq!(b.pick(3, VersionRange { min: 0, max: 13 }), Ok(9));
        assert_eq!(b.pick(15, capped(ours, Some(4))), Ok(4));
    }

    #[test]
    fn one_missing_api_degrades_only_that_api() {
        let b = BrokerVersions::from_ranges([(3, 0, 9), (2, 0, 0)]);
        assert_eq!(
            b.pick(2, VersionRange { min: 1, max: 10 }),
            Err(("1..10".into(), Some("0..0".into())))
        );
        assert_eq!(
            b.pick(60, VersionRange { min: 0, max: 2 }),
            Err(("0..2".into(), None))
        );
        assert_eq!(b.pick(3, VersionRange { min: 0, max: 13 }), Ok(9));
    }
}
