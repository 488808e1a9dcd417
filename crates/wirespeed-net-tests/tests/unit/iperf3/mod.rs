mod client;
mod codec;
mod server;
