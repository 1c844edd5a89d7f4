//! The client side of SCRAM (RFC 5802; SHA-256 per RFC 7677, SHA-512 as Kafka uses it), as a pure state machine:
//! the client-first message, then the client-final message from the server-first one, then the check of the
//! server's signature. No I/O; [`super::sasl`] carries the messages in SaslAuthenticate requests.
//!
//! What a hostile server can do is bounded: its iteration count must lie within [`MIN_ITERATIONS`] and
//! [`MAX_ITERATIONS`] (Kafka itself accepts 4096 to 16384), its nonce must extend ours, its salt must be base64.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use hmac::{KeyInit, Mac};

/// Fewest PBKDF2 iterations accepted (RFC 7677's minimum, and Kafka's).
pub const MIN_ITERATIONS: u32 = 4096;
/// Most PBKDF2 iterations accepted: a server asking more is refused rather than costing seconds of CPU.
pub const MAX_ITERATIONS: u32 = 100_000;

/// SCRAM's hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hash {
    /// SHA-256.
    Sha256,
    /// SHA-512.
    Sha512,
}

impl Hash {
    fn hmac(self, key: &[u8], parts: &[&[u8]]) -> Vec<u8> {
        fn run<M: Mac + KeyInit>(key: &[u8], parts: &[&[u8]]) -> Vec<u8> {
            let mut m = <M as KeyInit>::new_from_slice(key).expect("HMAC takes keys of any length");
            for p in parts {
                m.update(p);
            }
            m.finalize().into_bytes().to_vec()
        }
        match self {
            Hash::Sha256 => run::<hmac::Hmac<sha2::Sha256>>(key, parts),
            Hash::Sha512 => run::<hmac::Hmac<sha2::Sha512>>(key, parts),
        }
    }

    fn digest(self, data: &[u8]) -> Vec<u8> {
        use sha2::Digest;
        match self {
            Hash::Sha256 => sha2::Sha256::digest(data).to_vec(),
            Hash::Sha512 => sha2::Sha512::digest(data).to_vec(),
        }
    }

    /// PBKDF2 with HMAC of this hash, one block (RFC 5802's `Hi`).
    fn hi(self, password: &[u8], salt: &[u8], iterations: u32) -> Vec<u8> {
        let mut u = self.hmac(password, &[salt, &1u32.to_be_bytes()]);
        let mut out = u.clone();
        for _ in 1..iterations {
            u = self.hmac(password, &[&u]);
            out.iter_mut().zip(&u).for_each(|(o, x)| *o ^= x);
        }
        out
    }
}

/// One SCRAM exchange in progress.
#[derive(Debug)]
pub struct ScramClient {
    hash: Hash,
    password: String,
    nonce: String,
    client_first_bare: String,
}

/// Waiting for the server's final message.
#[derive(Debug)]
pub struct ScramFinal {
    expected_signature: Vec<u8>,
}

impl ScramClient {
    /// Starts an exchange for `username` with the client nonce `nonce` (printable, no comma). Returns the state
    /// and the client-first message.
    pub fn start(hash: Hash, username: &str, password: &str, nonce: &str) -> (Self, String) {
        let bare = format!("n={},r={nonce}", saslname(username));
        let first = format!("n,,{bare}");
        (
            Self {
                hash,
                password: password.to_string(),
                nonce: nonce.to_string(),
                client_first_bare: bare,
            },
            first,
        )
    }

    /// A fresh client nonce: 24 random bytes from the OS, base64 (no comma in that alphabet).
    pub fn random_nonce() -> Result<String, String> {
        let mut bytes = [0u8; 24];
        getrandom::fill(&mut bytes)
            .map_err(|e| format!("no random bytes for the SCRAM nonce: {e}"))?;
        Ok(B64.encode(bytes))
    }

    /// The client-final message answering `server_first`, and the state to check the server's final message.
    pub fn finish(self, server_first: &str) -> Result<(ScramFinal, String), String> {
        if let Some(e) = attribute(server_first, 'e') {
            return Err(format!("the server refused: {e}"));
        }
        let nonce = attribute(server_first, 'r').ok_or("server-first message without nonce")?;
        if !nonce.starts_with(&self.nonce) || nonce.len() == self.nonce.len() {
            return Err("the server's nonce does not extend the client's".into());
        }
        let salt = attribute(server_first, 's').ok_or("server-first message without salt")?;
        let salt = B64
            .decode(salt)
            .map_err(|e| format!("server-first message: salt is not base64: {e}"))?;
        let iterations: u32 = attribute(server_first, 'i')
            .ok_or("server-first message without iteration count")?
            .parse()
            .map_err(|_| "server-first message: iteration count is not a number")?;
        if !(MIN_ITERATIONS..=MAX_ITERATIONS).contains(&iterations) {
            return Err(format!(
                "server-first message: {iterations} iterations, outside {MIN_ITERATIONS}..={MAX_ITERATIONS}"
            ));
        }
        let h = self.hash;
        let salted = h.hi(self.password.as_bytes(), &salt, iterations);
        let client_key = h.hmac(&salted, &[b"Client Key"]);
        let stored_key = h.digest(&client_key);
        let without_proof = format!("c=biws,r={nonce}");
        let auth_message = format!("{},{server_first},{without_proof}", self.client_first_bare);
        let client_signature = h.hmac(&stored_key, &[auth_message.as_bytes()]);
        let proof: Vec<u8> = client_key
            .iter()
            .zip(&client_signature)
            .map(|(k, s)| k ^ s)
            .collect();
        let server_key = h.hmac(&salted, &[b"Server Key"]);
        let expected_signature = h.hmac(&server_key, &[auth_message.as_bytes()]);
        Ok((
            ScramFinal { expected_signature },
            format!("{without_proof},p={}", B64.encode(proof)),
        ))
    }
}

impl ScramFinal {
    /// Checks the server-final message: the server proves it knows the password too.
    pub fn verify(self, server_final: &str) -> Result<(), String> {
        if let Some(e) = attribute(server_final, 'e') {
            return Err(format!("the server refused: {e}"));
        }
        let v = attribute(server_final, 'v').ok_or("server-final message without signature")?;
        let v = B64
            .decode(v)
            .map_err(|e| format!("server-final message: signature is not base64: {e}"))?;
        if v != self.expected_signature {
            return Err(
                "the server's signature does not match: it does not know the password".into(),
            );
        }
        Ok(())
    }
}

/// The value of attribute `name` in a comma-separated SCRAM message.
fn attribute(message: &str, name: char) -> Option<&str> {
    message.split(',').find_map(|part| {
        let mut chars = part.chars();
        (chars.next() == Some(name) && chars.next() == Some('=')).then(|| &part[2..])
    })
}

/// A user name as SCRAM carries it: `=` as `=3D`, `,` as `=2C`.
fn saslname(name: &str) -> String {
    name.replace('=', "=3D").replace(',', "=2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7677, section 3: the SCRAM-SHA-256 example exchange.
    #[test]
    fn rfc_7677_example() {
        let (c, first) = ScramClient::start(Hash::Sha256, "user", "pencil", "rOprNGfwEbeRWgbNEkqO");
        assert_eq!(first, "n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
        let server_first = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
        let (f, last) = c.finish(server_first).unwrap();
        assert_eq!(
            last,
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,\
             p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        f.verify("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
            .unwrap();
    }

    #[test]
    fn a_wrong_server_signature_is_refused() {
        let (c, _) = ScramClient::start(Hash::Sha256, "user", "pencil", "rOprNGfwEbeRWgbNEkqO");
        let (f, _) = c
            .finish("r=rOprNGfwEbeRWgbNEkqOxyz,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
            .unwrap();
        let e = f
            .verify("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
            .unwrap_err();
        assert!(e.contains("does not match"), "{e}");
    }

    #[test]
    fn hostile_server_first_messages_are_refused() {
        for (server_first, why) in [
            ("r=other,s=AAAA,i=4096", "nonce"),
            ("r=abc,s=AAAA,i=4096", "nonce"),
            ("r=abcd,s=!!,i=4096", "base64"),
            ("r=abcd,s=AAAA,i=4000000000", "iterations"),
            ("r=abcd,s=AAAA,i=1", "iterations"),
            ("r=abcd,s=AAAA,i=x", "number"),
            ("r=abcd,s=AAAA", "iteration count"),
            ("e=invalid-proof", "refused"),
        ] {
            let (c, _) = ScramClient::start(Hash::Sha512, "u", "p", "abc");
            let e = c.finish(server_first).unwrap_err();
            assert!(e.contains(why), "{server_first}: {e}");
        }
    }

    #[test]
    fn user_names_are_escaped() {
        let (_, first) = ScramClient::start(Hash::Sha256, "a=b,c", "p", "n");
        assert_eq!(first, "n,,n=a=3Db=2Cc,r=n");
    }

    #[test]
    fn nonces_are_fresh_and_comma_free() {
        let a = ScramClient::random_nonce().unwrap();
        let b = ScramClient::random_nonce().unwrap();
        assert_ne!(a, b);
        assert!(!a.contains(','));
    }
}
