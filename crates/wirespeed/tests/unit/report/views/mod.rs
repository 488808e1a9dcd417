mod tests;
