pub mod www;
