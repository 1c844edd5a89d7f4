//! The bookie protocol v3 messages mqwatch uses, by hand with BookKeeper's field numbers (proto2: every field
//! optional on the wire). Framing: a big-endian i32 length, then one message. Public so test bookies can answer.

/// Protocol version 3.
pub const VERSION_THREE: i32 = 3;
/// Operation GET_BOOKIE_INFO.
pub const GET_BOOKIE_INFO: i32 = 8;
/// Operation GET_LIST_OF_ENTRIES_OF_LEDGER.
pub const GET_LIST_OF_ENTRIES_OF_LEDGER: i32 = 11;
/// Status EOK.
pub const EOK: i32 = 0;
/// Status ENOLEDGER: the bookie holds nothing of the ledger.
pub const ENOLEDGER: i32 = 402;

/// `BKPacketHeader`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PacketHeader {
    /// Protocol version.
    #[prost(int32, optional, tag = "1")]
    pub version: Option<i32>,
    /// Operation.
    #[prost(int32, optional, tag = "2")]
    pub operation: Option<i32>,
    /// Transaction id, echoed in the response.
    #[prost(uint64, optional, tag = "3")]
    pub txn_id: Option<u64>,
    /// Priority.
    #[prost(uint32, optional, tag = "4")]
    pub priority: Option<u32>,
}

/// `Request`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Request {
    /// Header.
    #[prost(message, optional, tag = "1")]
    pub header: Option<PacketHeader>,
    /// GET_BOOKIE_INFO body.
    #[prost(message, optional, tag = "105")]
    pub get_bookie_info: Option<GetBookieInfoRequest>,
    /// GET_LIST_OF_ENTRIES_OF_LEDGER body.
    #[prost(message, optional, tag = "108")]
    pub get_list_of_entries_of_ledger: Option<GetListOfEntriesOfLedgerRequest>,
}

/// `GetBookieInfoRequest`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetBookieInfoRequest {
    /// Flags: 1 total disk, 2 free disk.
    #[prost(int64, optional, tag = "1")]
    pub requested: Option<i64>,
}

/// `GetListOfEntriesOfLedgerRequest`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetListOfEntriesOfLedgerRequest {
    /// Ledger id.
    #[prost(int64, optional, tag = "1")]
    pub ledger_id: Option<i64>,
}

/// `Response`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Response {
    /// Header (echoes the request's).
    #[prost(message, optional, tag = "1")]
    pub header: Option<PacketHeader>,
    /// Status.
    #[prost(int32, optional, tag = "2")]
    pub status: Option<i32>,
    /// GET_BOOKIE_INFO answer.
    #[prost(message, optional, tag = "105")]
    pub get_bookie_info: Option<GetBookieInfoResponse>,
    /// GET_LIST_OF_ENTRIES_OF_LEDGER answer.
    #[prost(message, optional, tag = "108")]
    pub get_list_of_entries_of_ledger: Option<GetListOfEntriesOfLedgerResponse>,
}

/// `GetBookieInfoResponse`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetBookieInfoResponse {
    /// Status.
    #[prost(int32, optional, tag = "1")]
    pub status: Option<i32>,
    /// Total disk bytes.
    #[prost(int64, optional, tag = "2")]
    pub total_disk_capacity: Option<i64>,
    /// Free disk bytes.
    #[prost(int64, optional, tag = "3")]
    pub free_disk_space: Option<i64>,
}

/// `GetListOfEntriesOfLedgerResponse`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetListOfEntriesOfLedgerResponse {
    /// Status.
    #[prost(int32, optional, tag = "1")]
    pub status: Option<i32>,
    /// Ledger id.
    #[prost(int64, optional, tag = "2")]
    pub ledger_id: Option<i64>,
    /// The availability bytes (see [`crate::availability`]).
    #[prost(bytes = "vec", optional, tag = "3")]
    pub availability_of_entries_of_ledger: Option<Vec<u8>>,
}
