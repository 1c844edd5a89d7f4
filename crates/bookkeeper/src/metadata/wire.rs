//! The protobuf messages of ledger metadata, by hand with BookKeeper's field numbers (proto2: every field
//! optional on the wire; the required ones are checked when converting to [`super::LedgerMetadata`]).

#[derive(Clone, PartialEq, prost::Message)]
pub struct LedgerMetadataFormat {
    #[prost(int32, optional, tag = "1")]
    pub quorum_size: Option<i32>,
    #[prost(int32, optional, tag = "2")]
    pub ensemble_size: Option<i32>,
    #[prost(int64, optional, tag = "3")]
    pub length: Option<i64>,
    #[prost(int64, optional, tag = "4")]
    pub last_entry_id: Option<i64>,
    #[prost(int32, optional, tag = "5")]
    pub state: Option<i32>,
    #[prost(message, repeated, tag = "6")]
    pub segment: Vec<Segment>,
    #[prost(int32, optional, tag = "7")]
    pub digest_type: Option<i32>,
    #[prost(bytes = "vec", optional, tag = "8")]
    pub password: Option<Vec<u8>>,
    #[prost(int32, optional, tag = "9")]
    pub ack_quorum_size: Option<i32>,
    #[prost(int64, optional, tag = "10")]
    pub ctime: Option<i64>,
    #[prost(message, repeated, tag = "11")]
    pub custom_metadata: Vec<CustomMetadata>,
    #[prost(int64, optional, tag = "12")]
    pub c_token: Option<i64>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Segment {
    #[prost(string, repeated, tag = "1")]
    pub ensemble_member: Vec<String>,
    #[prost(int64, optional, tag = "2")]
    pub first_entry_id: Option<i64>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct CustomMetadata {
    #[prost(string, optional, tag = "1")]
    pub key: Option<String>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub value: Option<Vec<u8>>,
}
