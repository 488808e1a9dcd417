mod brief;
mod evidence;
mod tests;
mod wait;
