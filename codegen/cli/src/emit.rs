//! `cudajit emit`: what a kernel became, read from a `CUDAJIT_DUMP` directory.

use std::path::{Path, PathBuf};
use std::process::Command;

use cudajit::codegen::dump::DumpKind;
use cudajit::codegen::toolchain::Toolchain;
use cudajit::Arch;

use super::{OK, PROBLEM};

/// `cudajit emit --kernel NAME [--arch sm_90] (--ir | --nvvm | --ptx | --sass) [--dir DIR]`
/// or `cudajit emit --list [--dir DIR]`.
#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("form").args(["ir", "nvvm", "ptx", "sass"]))]
pub struct EmitArgs {
    /// The dump directory (default: $CUDAJIT_DUMP).
    #[arg(long, value_name = "DIR")]
    dir: Option<String>,
    /// The kernel (its entry symbol, or the start of it).
    #[arg(long, value_name = "NAME")]
    pub kernel: Option<String>,
    /// The architecture, when the kernel was compiled for several.
    #[arg(long, value_name = "ARCH")]
    arch: Option<String>,
    /// Lists the kernels in the dump directory.
    #[arg(long, conflicts_with_all = ["kernel", "form"])]
    list: bool,
    /// cudajit's IR.
    #[arg(long)]
    ir: bool,
    /// The NVVM IR given to libNVVM.
    #[arg(long)]
    nvvm: bool,
    /// The linked PTX.
    #[arg(long)]
    ptx: bool,
    /// The cubin's SASS (through nvdisasm or cuobjdump).
    #[arg(long)]
    sass: bool,
}

impl EmitArgs {
    /// The form asked for, as its flag.
    pub fn kind(&self) -> Option<&'static str> {
        [
            (self.ir, "--ir"),
            (self.nvvm, "--nvvm"),
            (self.ptx, "--ptx"),
            (self.sass, "--sass"),
        ]
        .into_iter()
        .find_map(|(set, flag)| set.then_some(flag))
    }
}

/// Runs `cudajit emit ...`.
pub fn run(args: &EmitArgs) -> Result<i32, String> {
    let dir = args.dir.clone();
    let kernel = args.kernel.clone();
    let arch = args.arch.clone();
    let list = args.list;
    let kinds: Vec<&str> = args.kind().into_iter().collect();

    let dir = match dir.or_else(|| std::env::var("CUDAJIT_DUMP").ok()) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => {
            eprintln!(
                "cudajit: no dump directory. Run the program with CUDAJIT_DUMP=DIR (it writes every compiled kernel there), then `cudajit emit --dir DIR --kernel NAME --ptx`."
            );
            return Ok(PROBLEM);
        }
    };
    let dumped = dumped_kernels(&dir);
    if list {
        for (entry, archs) in &dumped {
            println!("{entry:<40} {}", archs.join(" "));
        }
        if dumped.is_empty() {
            println!("no kernel dumps in {}", dir.display());
        }
        return Ok(OK);
    }
    let kernel = kernel.ok_or("`cudajit emit` needs --kernel NAME (or --list)")?;
    let [kind] = kinds[..] else {
        return Err("`cudajit emit` needs exactly one of --ir, --nvvm, --ptx, --sass".into());
    };
    let Some((entry, archs)) = dumped
        .iter()
        .find(|(entry, _)| *entry == kernel)
        .or_else(|| dumped.iter().find(|(entry, _)| entry.starts_with(&kernel)))
    else {
        let names: Vec<&str> = dumped.iter().map(|(e, _)| e.as_str()).collect();
        eprintln!(
            "cudajit: no dump of kernel `{kernel}` in {}; dumped kernels: {}. Run the program with CUDAJIT_DUMP={} and launch the kernel.",
            dir.display(),
            if names.is_empty() { "none".to_owned() } else { names.join(", ") },
            dir.display()
        );
        return Ok(PROBLEM);
    };
    let arch: Arch = match (arch, &archs[..]) {
        (Some(arch), _) => arch.parse().map_err(|e| format!("--arch: {e}"))?,
        (None, [only]) => only.parse().map_err(|e| format!("{e}"))?,
        (None, []) if kind == "--ir" => Arch::SM_90,
        (None, many) => {
            return Err(format!(
                "`{entry}` was dumped for {}: choose one with --arch",
                if many.is_empty() {
                    "no architecture".to_owned()
                } else {
                    many.join(", ")
                }
            ))
        }
    };
    let dump_kind = match kind {
        "--ir" => DumpKind::Ir,
        "--nvvm" => DumpKind::NvvmIr,
        "--ptx" => DumpKind::Ptx,
        _ => DumpKind::Cubin,
    };
    let path = dump_kind.path(&dir, entry, arch);
    if !path.is_file() {
        eprintln!(
            "cudajit: {} does not exist; the kernel was not dumped for {arch} (or its PTX could not be produced: see the program's warnings)",
            path.display()
        );
        return Ok(PROBLEM);
    }
    if kind == "--sass" {
        return Ok(sass(&path));
    }
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            print!("{text}");
            Ok(OK)
        }
        Err(e) => {
            eprintln!("cudajit: cannot read {}: {e}", path.display());
            Ok(PROBLEM)
        }
    }
}

/// Entry symbols in `dir` with the architectures they were dumped for.
fn dumped_kernels(dir: &Path) -> Vec<(String, Vec<String>)> {
    let mut found: Vec<(String, Vec<String>)> = Vec::new();
    let names = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    for name in names {
        let (entry, arch) = if let Some(stem) = name.strip_suffix(".ir.txt") {
            (stem.to_owned(), None)
        } else if let Some(stem) = [".nvvm.ll", ".ptx", ".cubin"]
            .iter()
            .find_map(|suffix| name.strip_suffix(suffix))
        {
            match stem.rsplit_once('.') {
                Some((entry, arch)) if arch.starts_with("sm_") => {
                    (entry.to_owned(), Some(arch.to_owned()))
                }
                _ => continue,
            }
        } else {
            continue;
        };
        let slot = match found.iter().position(|(e, _)| *e == entry) {
            Some(at) => &mut found[at],
            None => {
                found.push((entry, Vec::new()));
                found.last_mut().expect("just pushed")
            }
        };
        if let Some(arch) = arch {
            if !slot.1.contains(&arch) {
                slot.1.push(arch);
            }
        }
    }
    found.sort();
    found
}

/// Disassembles `cubin` with nvdisasm (or cuobjdump) and prints the SASS.
fn sass(cubin: &Path) -> i32 {
    let (tools, searched) = disassemblers();
    let Some(tool) = tools.first() else {
        eprintln!(
            "cudajit: neither nvdisasm nor cuobjdump was found (searched: {}).\n\
             Fix: install the CUDA toolkit, or `pip install nvidia-cuda-nvdisasm` (13.2 or newer \
             reads the cubins of older releases too), or set CUDAJIT_NVDISASM to the nvdisasm \
             executable. The cubin itself is {}.",
            searched.join(", "),
            cubin.display()
        );
        return PROBLEM;
    };
    let is_nvdisasm = tool
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("nvdisasm"));
    let mut command = Command::new(tool);
    if is_nvdisasm {
        command.arg("--print-code").arg(cubin);
    } else {
        command.arg("-sass").arg(cubin);
    }
    match command.status() {
        Ok(status) if status.success() => OK,
        Ok(status) => {
            eprintln!("cudajit: {} exited with {status}", tool.display());
            PROBLEM
        }
        Err(e) => {
            eprintln!("cudajit: cannot run {}: {e}", tool.display());
            PROBLEM
        }
    }
}

/// nvdisasm and cuobjdump executables found, best first, and every place looked at.
fn disassemblers() -> (Vec<PathBuf>, Vec<String>) {
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut found = Vec::new();
    let mut searched = Vec::new();
    if let Some(explicit) = std::env::var_os("CUDAJIT_NVDISASM") {
        searched.push("CUDAJIT_NVDISASM".to_owned());
        let path = PathBuf::from(explicit);
        if path.is_file() {
            found.push(path);
        }
    }
    if let Ok(toolchain) = Toolchain::global() {
        if let Some(bin) = toolchain
            .nvcc_location()
            .ok()
            .and_then(|l| l.path.parent().map(Path::to_path_buf))
        {
            dirs.push(bin);
        }
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(root) = std::env::var_os(var) {
            dirs.push(PathBuf::from(root).join("bin"));
        }
    }
    dirs.push(PathBuf::from("/usr/local/cuda/bin"));
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    for tool in ["nvdisasm", "cuobjdump"] {
        for dir in &dirs {
            let candidate = dir.join(tool);
            if candidate.is_file() && !found.contains(&candidate) {
                found.push(candidate);
            }
        }
    }
    searched.extend(dirs.iter().map(|d| d.display().to_string()));
    searched.dedup();
    (found, searched)
}
