//! A SCRAM server's two messages as mqwatch's SASL client reads them (SaslAuthenticate auth bytes from the
//! broker): the input split at its first NUL into server-first and server-final. Any bytes must end in `Ok` or
//! `Err`, never a panic; the iteration bound keeps each run short.
#![no_main]
use libfuzzer_sys::fuzz_target;
use mqwatch_kafka::client::scram::{Hash, ScramClient};

fuzz_target!(|data: &[u8]| {
    let (first, last) = match data.iter().position(|b| *b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let hash = if data.len() % 2 == 0 { Hash::Sha256 } else { Hash::Sha512 };
    let (client, _) = ScramClient::start(hash, "user", "pencil", "fuzznonce");
    if let Ok((fin, _)) = client.finish(&String::from_utf8_lossy(first)) {
        let _ = fin.verify(&String::from_utf8_lossy(last));
    }
});
