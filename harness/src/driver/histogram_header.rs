//! The header of a stored latency histogram checked before it is decoded. HdrHistogram's V2
//! format declares its payload length, precision and highest trackable value up front, and the
//! decoder allocates what they ask for: a results file from elsewhere declaring 4 GiB made
//! `iobound table` abort. Every histogram this harness writes (and its Kafka load tool's) is
//! within HIST_MAX_US at HIST_SIGFIG digits, so a header beyond that is refused by name.

use super::record::{new_histogram, HIST_MAX_US, HIST_SIGFIG};
use anyhow::{bail, Result};
use std::io::Read;

/// The V2 cookies, plain and compressed (HdrHistogram's encoding, little-endian word size
/// 8 in the low bits).
const V2: u32 = 0x1c84_9313;
const V2_COMPRESSED: u32 = 0x1c84_9314;

/// Bytes of a V2 header: cookie, payload length, offset, digits, lowest, highest, ratio.
const HEADER: usize = 40;

/// The most payload bytes a histogram within the bounds can hold: every count in the widest
/// encoding (9 bytes).
fn max_payload() -> usize {
    new_histogram().distinct_values() * 9
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn be64(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// The uncompressed V2 bytes of `bytes`, their header within the bounds; otherwise an error
/// naming the field.
pub fn checked_v2(bytes: &[u8]) -> Result<Vec<u8>> {
    if bytes.len() < 8 {
        bail!(
            "histogram of {} bytes is too short to hold a header",
            bytes.len()
        );
    }
    match be32(bytes, 0) {
        V2 => {
            let payload = header_payload(&bytes[..HEADER.min(bytes.len())])?;
            if bytes.len() - HEADER < payload {
                bail!(
                    "histogram declares a payload of {payload} bytes and holds {}",
                    bytes.len() - HEADER
                );
            }
            Ok(bytes[..HEADER + payload].to_vec())
        }
        V2_COMPRESSED => inflated(bytes),
        other => bail!("histogram begins with {other:#x}, not an HdrHistogram V2 cookie"),
    }
}

/// The compressed form inflated, reading no more than its checked header allows.
fn inflated(bytes: &[u8]) -> Result<Vec<u8>> {
    let len = be32(bytes, 4) as usize;
    if len > bytes.len() - 8 {
        bail!(
            "compressed histogram declares {len} bytes and holds {}",
            bytes.len() - 8
        );
    }
    let mut inflate = flate2::read::ZlibDecoder::new(&bytes[8..8 + len]);
    let mut header = vec![0u8; HEADER];
    inflate
        .read_exact(&mut header)
        .map_err(|e| anyhow::anyhow!("compressed histogram's header cannot be read: {e}"))?;
    if be32(&header, 0) != V2 {
        bail!("compressed histogram does not hold an HdrHistogram V2 header");
    }
    let payload = header_payload(&header)?;
    let mut plain = header;
    inflate.take(payload as u64).read_to_end(&mut plain)?;
    if plain.len() != HEADER + payload {
        bail!(
            "compressed histogram declares a payload of {payload} bytes and holds {}",
            plain.len() - HEADER
        );
    }
    Ok(plain)
}

/// The payload length a V2 `header` declares, once its fields are within the bounds.
fn header_payload(header: &[u8]) -> Result<usize> {
    if header.len() < HEADER {
        bail!(
            "histogram of {} bytes is too short to hold a header",
            header.len()
        );
    }
    let payload = be32(header, 4) as usize;
    let digits = be32(header, 12);
    let (low, high) = (be64(header, 16), be64(header, 24));
    if digits > u32::from(HIST_SIGFIG) {
        bail!("histogram declares {digits} significant digits; a run records {HIST_SIGFIG}");
    }
    if low < 1 || high > HIST_MAX_US {
        bail!(
            "histogram declares a highest trackable value of {high} (lowest {low}); a run \
             records from 1 to {HIST_MAX_US} µs"
        );
    }
    if payload > max_payload() {
        bail!(
            "histogram declares a payload of {payload} bytes; one within a run's bounds holds \
             at most {}",
            max_payload()
        );
    }
    Ok(payload)
}
