//! Request codes mqwatch sends, with their RocketMQ names for error messages.

/// A remoting request code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RequestCode(pub i32);

macro_rules! codes {
    ($($name:ident = $n:literal,)*) => {
        impl RequestCode {
            $(
                #[doc = concat!("`", stringify!($name), "` (", stringify!($n), ").")]
                pub const $name: RequestCode = RequestCode($n);
            )*

            /// RocketMQ's name for the code, when mqwatch knows it.
            pub fn name(self) -> Option<&'static str> {
                match self.0 {
                    $($n => Some(stringify!($name)),)*
                    _ => None,
                }
            }
        }
    };
}

codes! {
    SEND_MESSAGE = 10,
    PULL_MESSAGE = 11,
    QUERY_CONSUMER_OFFSET = 14,
    UPDATE_CONSUMER_OFFSET = 15,
    UPDATE_AND_CREATE_TOPIC = 17,
    GET_ALL_TOPIC_CONFIG = 21,
    GET_BROKER_CONFIG = 26,
    GET_BROKER_RUNTIME_INFO = 28,
    GET_MAX_OFFSET = 30,
    GET_MIN_OFFSET = 31,
    GET_EARLIEST_MSG_STORETIME = 32,
    GET_ROUTEINFO_BY_TOPIC = 105,
    GET_BROKER_CLUSTER_INFO = 106,
    UPDATE_AND_CREATE_SUBSCRIPTIONGROUP = 200,
    GET_ALL_SUBSCRIPTIONGROUP_CONFIG = 201,
    GET_TOPIC_STATS_INFO = 202,
    GET_CONSUMER_CONNECTION_LIST = 203,
    GET_ALL_TOPIC_LIST_FROM_NAMESERVER = 206,
    GET_CONSUME_STATS = 208,
    QUERY_CONSUME_TIME_SPAN = 303,
    GET_SYSTEM_TOPIC_LIST_FROM_NS = 304,
    GET_CONSUMER_RUNNING_INFO = 307,
    VIEW_BROKER_STATS_DATA = 315,
    GET_BROKER_CONSUME_STATS = 317,
    GET_NAMESRV_CONFIG = 319,
}

impl std::fmt::Display for RequestCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n} ({})", self.0),
            None => write!(f, "request code {}", self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_print_with_their_names() {
        assert_eq!(
            RequestCode::GET_CONSUME_STATS.to_string(),
            "GET_CONSUME_STATS (208)"
        );
        assert_eq!(RequestCode(9999).to_string(), "request code 9999");
    }
}
