fn main() {
    std::process::exit(cuda_setup::cli::main());
}
