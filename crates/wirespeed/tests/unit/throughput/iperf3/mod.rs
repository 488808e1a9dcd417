mod html;
mod json;
