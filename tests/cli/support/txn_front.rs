//! A Kafka-protocol front on 127.0.0.1 for a broker without DescribeTransactions
//! (Tansu), so `leader status --expect-token` can check a token against an epoch the
//! broker side holds, which no test broker can show otherwise.
//!
//! Per connection, request by request: ApiVersions goes to the broker and comes back
//! with DescribeTransactions v0 added; InitProducerId goes to the broker and the
//! (transactional id → producer id, epoch) it minted is remembered from the answer;
//! DescribeTransactions is answered here from what was remembered (an id never minted
//! is TRANSACTIONAL_ID_NOT_FOUND, 105, as Kafka answers it); everything else is relayed
//! as it is. The broker must advertise the front's port, so every connection the client
//! opens (coordinator, partition leaders) comes through here.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{Buf, BytesMut};
use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::describe_transactions_response::TransactionState;
use kafka_protocol::messages::{
    ApiKey, ApiVersionsResponse, DescribeTransactionsRequest, DescribeTransactionsResponse,
    InitProducerIdRequest, InitProducerIdResponse, ProducerId, RequestHeader, ResponseHeader,
};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, StrBytes};

const TRANSACTIONAL_ID_NOT_FOUND: i16 = 105;

type Minted = Arc<Mutex<HashMap<String, (i64, i16)>>>;

pub struct TxnFront {
    listener: Option<TcpListener>,
    port: u16,
    minted: Minted,
    stop: Arc<AtomicBool>,
}

impl TxnFront {
    /// Binds a port, so the broker can advertise it before it starts.
    pub fn bind() -> TxnFront {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        TxnFront {
            listener: Some(listener),
            port,
            minted: Arc::default(),
            stop: Arc::default(),
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Accepts connections, each relayed to `backend` on a thread of its own.
    pub fn serve(&mut self, backend: SocketAddr) {
        let listener = self.listener.take().expect("serve once");
        let (minted, stop) = (self.minted.clone(), self.stop.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(client) = client else { continue };
                let minted = minted.clone();
                std::thread::spawn(move || {
                    if let Ok(broker) = TcpStream::connect_timeout(&backend, Duration::from_secs(5))
                    {
                        let _ = front(client, broker, &minted);
                    }
                });
            }
        });
    }
}

impl Drop for TxnFront {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

type Io<T> = std::io::Result<T>;

fn bad(e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string())
}

fn read_frame(s: &mut TcpStream) -> Io<Vec<u8>> {
    let mut len = [0u8; 4];
    s.read_exact(&mut len)?;
    let len = usize::try_from(i32::from_be_bytes(len)).map_err(bad)?;
    let mut body = vec![0u8; len];
    s.read_exact(&mut body)?;
    Ok(body)
}

fn write_frame(s: &mut TcpStream, body: &[u8]) -> Io<()> {
    s.write_all(&(body.len() as i32).to_be_bytes())?;
    s.write_all(body)?;
    s.flush()
}

/// A response frame: its header at the version `R` uses for `version`, then `body`.
fn response<R: Encodable + HeaderVersion>(
    correlation_id: i32,
    version: i16,
    body: &R,
) -> Io<Vec<u8>> {
    let mut out = BytesMut::new();
    ResponseHeader::default()
        .with_correlation_id(correlation_id)
        .encode(&mut out, R::header_version(version))
        .map_err(bad)?;
    body.encode(&mut out, version).map_err(bad)?;
    Ok(out.to_vec())
}

fn front(mut client: TcpStream, mut broker: TcpStream, minted: &Minted) -> Io<()> {
    loop {
        let frame = read_frame(&mut client)?;
        if frame.len() < 8 {
            return Err(bad("short request"));
        }
        let key = i16::from_be_bytes([frame[0], frame[1]]);
        let version = i16::from_be_bytes([frame[2], frame[3]]);
        let correlation_id = i32::from_be_bytes([frame[4], frame[5], frame[6], frame[7]]);
        if key == ApiKey::DescribeTransactions as i16 {
            let mut buf = bytes::Bytes::from(frame);
            let header_version = DescribeTransactionsRequest::header_version(version);
            RequestHeader::decode(&mut buf, header_version).map_err(bad)?;
            let request = DescribeTransactionsRequest::decode(&mut buf, version).map_err(bad)?;
            let known = minted.lock().unwrap().clone();
            let states = request
                .transactional_ids
                .iter()
                .map(|id| {
                    let state = TransactionState::default().with_transactional_id(id.clone());
                    match known.get(id.as_str()) {
                        Some(&(pid, epoch)) => state
                            .with_transaction_state(StrBytes::from_static_str("Empty"))
                            .with_producer_id(ProducerId(pid))
                            .with_producer_epoch(epoch),
                        None => state.with_error_code(TRANSACTIONAL_ID_NOT_FOUND),
                    }
                })
                .collect();
            let answer = DescribeTransactionsResponse::default().with_transaction_states(states);
            write_frame(&mut client, &response(correlation_id, version, &answer)?)?;
            continue;
        }
        // InitProducerId: remember which id the answer is for.
        let init_id = if key == ApiKey::InitProducerId as i16 {
            let mut buf = bytes::Bytes::from(frame.clone());
            RequestHeader::decode(&mut buf, InitProducerIdRequest::header_version(version))
                .map_err(bad)?;
            InitProducerIdRequest::decode(&mut buf, version)
                .map_err(bad)?
                .transactional_id
                .map(|id| id.to_string())
        } else {
            None
        };
        write_frame(&mut broker, &frame)?;
        let mut answer = read_frame(&mut broker)?;
        if key == ApiKey::ApiVersions as i16 {
            let mut buf = bytes::Bytes::from(answer.clone());
            ResponseHeader::decode(&mut buf, ApiVersionsResponse::header_version(version))
                .map_err(bad)?;
            let mut versions = ApiVersionsResponse::decode(&mut buf, version).map_err(bad)?;
            let describe = ApiKey::DescribeTransactions as i16;
            if versions.error_code == 0 && !versions.api_keys.iter().any(|k| k.api_key == describe)
            {
                versions.api_keys.push(
                    ApiVersion::default()
                        .with_api_key(describe)
                        .with_min_version(0)
                        .with_max_version(0),
                );
            }
            answer = response(correlation_id, version, &versions)?;
        } else if let Some(id) = init_id {
            let mut buf = bytes::Bytes::from(answer.clone());
            ResponseHeader::decode(&mut buf, InitProducerIdResponse::header_version(version))
                .map_err(bad)?;
            let minted_now = InitProducerIdResponse::decode(&mut buf, version).map_err(bad)?;
            if minted_now.error_code == 0 && !buf.has_remaining() {
                minted
                    .lock()
                    .unwrap()
                    .insert(id, (minted_now.producer_id.0, minted_now.producer_epoch));
            }
        }
        write_frame(&mut client, &answer)?;
    }
}
