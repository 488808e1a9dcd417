mod peer;
mod rules;
