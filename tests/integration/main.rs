//! The integration tests, one binary: each test binary links the whole program (eframe,
//! reqwest, tokio) again, so one binary instead of fourteen saves most of a warm
//! `cargo test`. Each module is one area; `cargo test --test integration cudnn::` runs one.
//! The property tests are their own binary (`tests/fuzz.rs`): their long run builds only
//! them, in release.

#[path = "../support/mod.rs"]
mod support;

mod advice;
mod after_run;
mod bundle;
mod cli;
mod cli_words;
mod ctranslate2_loads;
mod cudnn;
mod detect;
mod devlayout_windows;
mod dllwalk;
mod doctor_dev;
mod doctor_packages;
mod download;
mod driver;
mod driver_choice;
mod driverwatch;
mod fleet_collect;
mod fleet_engines;
mod fleet_profile;
mod fleet_state;
mod free_threaded;
mod gpus_pci;
mod guard;
mod gui;
mod gui_a11y;
mod gui_contrast;
mod gui_cudnn;
mod gui_driver;
mod gui_driver_choice;
mod gui_free_threaded;
mod gui_guard;
mod gui_hints;
mod gui_installed;
mod gui_journey;
mod gui_mirrors;
mod gui_packages;
mod gui_uitheme;
mod gui_uiwalk;
mod gui_uninstall;
mod gui_verdict;
mod gui_walk;
mod gui_wsl;
mod hostile_names;
mod hostile_sizes;
mod install;
mod jetson;
mod linux_driver;
mod one_writer;
mod package_libraries;
mod packaging;
mod places;
mod places_cudnn;
mod proxy;
mod real_dev;
mod recommend_cases;
mod refresh;
mod refresh_gpu_packages;
mod refresh_pypi_torch;
mod repair;
mod sources;
mod state_files;
mod state_records;
mod tables;
mod torch_sources;
mod uninstall;
mod verbose;
mod verify;
mod wheels;
mod wheels_keep;
mod wsl;
