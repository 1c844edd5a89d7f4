//! mqwatch binary (being written)
fn main() {}
