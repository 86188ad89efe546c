//! What both test harnesses (`common` for the server codec, `client_support` for the client
//! codec) do with their `EmbeddedChannel`: write from the application's side, read what the
//! codec wrote, name the errors that reached the application.

use netloop_transport::{EmbeddedChannel, Message, TransportError};

/// Writes and flushes `msg` from the application's side; the write's outcome.
pub fn send(ch: &EmbeddedChannel, msg: Message) -> Option<Result<(), TransportError>> {
    let f = ch.channel().write_future(msg);
    ch.channel().flush();
    ch.run_pending_tasks();
    f.result()
}

/// Everything written so far, as text.
pub fn output(ch: &EmbeddedChannel) -> String {
    let mut all = Vec::new();
    while let Some(m) = ch.read_outbound() {
        all.extend_from_slice(m.as_bytes().expect("the codec writes bytes"));
    }
    String::from_utf8_lossy(&all).into_owned()
}

/// The codes of `errors`, in order.
pub fn error_codes(errors: &[TransportError]) -> Vec<String> {
    errors.iter().map(|e| e.code().to_string()).collect()
}
