mod brief;
mod html;
mod metrics;
mod queues;
mod tests;
mod verdicts;
