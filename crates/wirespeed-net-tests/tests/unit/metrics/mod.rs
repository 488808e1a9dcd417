mod agent_page;
mod http;
mod listener;
mod probe;
