//! `sqlx::migrate!` embeds the migrations when this crate compiles; without this, a new
//! migration file would not rebuild the crate (stable Rust does not let the macro track the
//! folder), and a build would run the old list.
fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
}
