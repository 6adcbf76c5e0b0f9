//! One module per page; each draws from `App` and starts its work through the worker.

pub mod choose;
pub mod cudnn;
pub mod done;
pub mod install;
pub mod prepare;
pub mod pytorch;
pub mod repair;
pub mod system;
pub mod verify;
pub mod welcome;
