//! GPUs by name and by PCI id.
//!
//! Names come as users and tools write them ("NVIDIA A100-SXM4-80GB", "NVIDIA GeForce RTX
//! 4060 Laptop GPU", "Tesla V100-SXM2-32GB"): they are matched in steps, each looser than
//! the one before, and the first step with a hit wins — the whole name; then without
//! memory size and form factor (`80GB`, `SXM4`, `PCIe`, `HBM3`, `NVL`); then also without
//! the laptop words (`Laptop GPU`, `Mobile`, `Max-Q`, `with Max-Q Design`); then every model
//! whose words hold all of the query's. Model numbers and their letters are never dropped,
//! so "RTX 4060" never becomes "RTX 4060 Ti", nor "RTX A4000" "RTX 4000 Ada".
//!
//! With no driver the PCI device id is all there is: the curated `[[gpu]]` rows first, else
//! the pci.ids database (`pci-ids-nvidia.txt`, NVIDIA's section) names the chip (`GA106`)
//! and the `[[chip]]` table gives its compute capability.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{ChipRow, GpuModel, TableError, Tables, normalise_pci_id};
use crate::version::ComputeCapability;

/// The pci.ids file's name in `compat-tables/` (and a `--compat-dir`, where optional).
pub const PCI_IDS_FILE: &str = "pci-ids-nvidia.txt";
pub(super) const EMBEDDED_PCI_IDS: &str =
    include_str!("../../../../compat-tables/pci-ids-nvidia.txt");

/// The most of a pci.ids text that is read (the whole database is ~1.6 MB).
pub const MAX_PCI_IDS_BYTES: usize = 8 << 20;
/// The most NVIDIA device lines kept (pci.ids has ~2,000).
const MAX_DEVICES: usize = 20_000;
/// A device name longer than this is cut.
const MAX_NAME: usize = 200;
/// The PCI vendor id of NVIDIA, as pci.ids writes it.
const NVIDIA: &str = "10de";

/// NVIDIA's device lines of a pci.ids file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PciIds {
    /// `2026.05.24`, from the `Version:` header line.
    pub version: Option<String>,
    /// Device id (`0x2b85`) → the pci.ids name (`GB202 [GeForce RTX 5090]`).
    pub devices: BTreeMap<String, String>,
}

impl PciIds {
    /// Reads NVIDIA's section of a pci.ids text. Input handling: at most
    /// [`MAX_PCI_IDS_BYTES`] are read, malformed lines are skipped, ids normalised
    /// (`0x` + lowercase), the first line for an id wins, names are cut and stripped of
    /// control characters. Other vendors, subsystem lines and comments are ignored.
    pub fn parse(text: &str) -> PciIds {
        let text = cut(text, MAX_PCI_IDS_BYTES);
        let mut out = PciIds::default();
        let mut in_nvidia = false;
        let mut seen_vendor = false;
        for line in text.lines() {
            let line = line.trim_end_matches('\r');
            if let Some(c) = line.strip_prefix('#') {
                if !seen_vendor && out.version.is_none() {
                    out.version = header_version(c);
                }
                continue;
            }
            if let Some(rest) = line.strip_prefix('\t') {
                if !in_nvidia || rest.starts_with('\t') {
                    continue;
                }
                let Some((id, name)) = id_and_name(rest) else {
                    continue;
                };
                if out.devices.len() >= MAX_DEVICES {
                    break;
                }
                if let Some(id) = normalise_pci_id(id) {
                    out.devices.entry(id).or_insert(name);
                }
                continue;
            }
            if let Some((vendor, _)) = id_and_name(line) {
                seen_vendor = true;
                let was = in_nvidia;
                in_nvidia = vendor.eq_ignore_ascii_case(NVIDIA);
                if was && !in_nvidia {
                    break;
                }
            } else if line.starts_with("C ") && seen_vendor {
                // The device-class list follows the vendors.
                break;
            }
        }
        out
    }

    /// Whether `self` is a newer database than `other` (by `Version:`; one without a
    /// version is never newer).
    pub fn newer_than(&self, other: &PciIds) -> bool {
        match (
            version_key(self.version.as_deref()),
            version_key(other.version.as_deref()),
        ) {
            (Some(a), Some(b)) => a > b,
            (Some(_), None) => true,
            _ => false,
        }
    }

    /// NVIDIA's section as a pci.ids text (device lines), with a header naming where it
    /// came from, for the refresh cache.
    pub fn to_text(&self, source: &str) -> String {
        let mut s = String::from(
            "#\n#\tList of PCI ID's: NVIDIA Corporation (vendor 10de), device lines only\n#\n",
        );
        if let Some(v) = &self.version {
            s.push_str(&format!("#\tVersion: {v}\n"));
        }
        s.push_str(&format!(
            "#\n#\tSource: {}\n#\tThe PCI ID database, https://pci-ids.ucw.cz/; GPL-2.0-or-later OR BSD-3-Clause.\n#\n\n{NVIDIA}  NVIDIA Corporation\n",
            clean(source)
        ));
        for (id, name) in &self.devices {
            s.push_str(&format!("\t{}  {name}\n", id.trim_start_matches("0x")));
        }
        s
    }
}

/// `s` cut to at most `max` bytes, on a character boundary.
fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// `XXXX  name` → (`XXXX`, name), for four hex digits and a name.
fn id_and_name(s: &str) -> Option<(&str, String)> {
    let id = s.get(..4)?;
    let name = s.get(4..)?.strip_prefix("  ")?;
    if !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let name = clean(name);
    (!name.is_empty()).then_some((id, name))
}

/// A name without control characters, trimmed and at most [`MAX_NAME`] characters.
fn clean(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(MAX_NAME)
        .collect::<String>()
        .trim()
        .to_string()
}

/// `\tVersion: 2026.05.24` → `2026.05.24` (digits and dots only).
fn header_version(comment: &str) -> Option<String> {
    let v = comment.trim().strip_prefix("Version:")?.trim();
    (!v.is_empty() && v.len() <= 20 && v.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
        .then(|| v.to_string())
}

fn version_key(v: Option<&str>) -> Option<Vec<u32>> {
    v?.split('.').map(|p| p.parse().ok()).collect()
}

/// The pci.ids database with what the tables derive from it.
#[derive(Debug, Clone, Default)]
pub struct PciDb {
    pub ids: PciIds,
    /// Where it came from: `embedded`, a file, a URL.
    pub origin: String,
    /// One model per GPU name the database gives on a chip of known compute capability
    /// (for names the `[[gpu]]` rows lack).
    models: Vec<GpuModel>,
}

impl PciDb {
    pub(super) fn new(ids: PciIds, origin: String, chips: &[ChipRow]) -> PciDb {
        let mut models: Vec<GpuModel> = Vec::new();
        for (id, name) in &ids.devices {
            let Some(gpu) = gpu_entry(name, chips) else {
                continue;
            };
            for alt in alternatives(gpu.product) {
                match models
                    .iter_mut()
                    .find(|m| m.cc == gpu.cc && m.name.eq_ignore_ascii_case(&alt))
                {
                    Some(m) => m.pci_ids.push(id.clone()),
                    None => models.push(GpuModel {
                        name: alt,
                        pci_ids: vec![id.clone()],
                        cc: gpu.cc,
                        segment: None,
                        aliases: Vec::new(),
                    }),
                }
            }
        }
        PciDb {
            ids,
            origin,
            models,
        }
    }

    /// The models named by the database (not the `[[gpu]]` rows).
    pub fn models(&self) -> &[GpuModel] {
        &self.models
    }
}

/// The database from a pci.ids text. The built-in one with the built-in chip table is
/// read once per process (tables are loaded often, and it never changes).
pub(super) fn database(
    pci: &str,
    origin: String,
    gpus_toml: &str,
    chips: &[ChipRow],
) -> Arc<PciDb> {
    static EMBEDDED: std::sync::OnceLock<Arc<PciDb>> = std::sync::OnceLock::new();
    let build = || Arc::new(PciDb::new(PciIds::parse(pci), origin.clone(), chips));
    if std::ptr::eq(pci, EMBEDDED_PCI_IDS) && std::ptr::eq(gpus_toml, super::EMBEDDED[3]) {
        EMBEDDED.get_or_init(build).clone()
    } else {
        build()
    }
}

/// A GPU line of pci.ids: its chip's row and the product name (the bracket text, else the
/// chip).
struct GpuEntry<'a> {
    chip: &'a ChipRow,
    cc: ComputeCapability,
    product: &'a str,
}

/// The GPU a pci.ids device name describes, if its chip is in `chips`. Audio, USB and
/// bridge functions of a GPU (`GB202 High Definition Audio Controller`) and NVSwitches
/// are not GPUs.
fn gpu_entry<'a>(name: &'a str, chips: &'a [ChipRow]) -> Option<GpuEntry<'a>> {
    let token = name.split_whitespace().next()?;
    let chip = chip_row(token, chips)?;
    let rest = name[token.len()..].trim_start();
    let product = if rest.is_empty() {
        token
    } else if rest.starts_with('[') || rest.starts_with('/') {
        match (rest.find('['), rest.rfind(']')) {
            (Some(a), Some(b)) if a < b => rest[a + 1..b].trim(),
            _ => token,
        }
    } else {
        return None;
    };
    if product.to_ascii_lowercase().contains("nvswitch") {
        return None;
    }
    Some(GpuEntry {
        chip,
        cc: chip.cc,
        product,
    })
}

/// The `[[chip]]` row for a pci.ids chip word: itself, else without the `GLM`/`GL`/`BM`/`M`
/// variant suffix, else also without a trailing `B` revision letter (`GK110B`, `GK208BM`).
fn chip_row<'a>(token: &str, chips: &'a [ChipRow]) -> Option<&'a ChipRow> {
    let find = |t: &str| chips.iter().find(|c| c.chip == t);
    if let Some(c) = find(token) {
        return Some(c);
    }
    let base = ["GLM", "GL", "BM", "M"]
        .iter()
        .find_map(|s| token.strip_suffix(s))
        .unwrap_or(token);
    find(base).or_else(|| find(base.strip_suffix('B')?))
}

/// The names in a pci.ids product text: "GeForce 945M / 945A" → "GeForce 945M",
/// "GeForce 945A"; a part without a model number ("Max-Q") is not a name.
fn alternatives(product: &str) -> Vec<String> {
    let parts: Vec<&str> = product.split(" / ").map(str::trim).collect();
    let brand: Vec<&str> = parts[0]
        .split_whitespace()
        .take_while(|w| !w.bytes().any(|b| b.is_ascii_digit()))
        .collect();
    let mut out = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        let name = if i > 0 && p.starts_with(|c: char| c.is_ascii_digit()) && !brand.is_empty() {
            format!("{} {p}", brand.join(" "))
        } else {
            p.to_string()
        };
        let core = Words::of(&name).core;
        if core.iter().any(|w| w.bytes().any(|b| b.is_ascii_digit())) {
            out.push(name);
        }
    }
    out
}

/// What a PCI device id identifies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PciGpu {
    pub name: String,
    pub cc: ComputeCapability,
    /// The chip pci.ids names (`GA106`), when it has the id.
    pub chip: Option<String>,
    pub source: PciGpuSource,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PciGpuSource {
    /// A `[[gpu]]` row of gpus.toml.
    Table,
    /// The pci.ids database and the `[[chip]]` table.
    PciIds,
}

impl Tables {
    /// The curated GPU (`[[gpu]]` row) with this PCI device id (`0x2684`, `2684`, any case).
    pub fn gpu_by_pci_id(&self, device_id: &str) -> Option<&GpuModel> {
        let want = normalise_pci_id(device_id)?;
        self.gpus
            .gpus
            .iter()
            .find(|g| g.pci_ids.iter().any(|id| id == &want))
    }

    /// The pci.ids name of an NVIDIA device id, whatever it is.
    pub fn pci_name(&self, device_id: &str) -> Option<&str> {
        let id = normalise_pci_id(device_id)?;
        self.pci.ids.devices.get(&id).map(String::as_str)
    }

    /// The GPU with this NVIDIA PCI device id: a `[[gpu]]` row, else the pci.ids entry's
    /// chip through `[[chip]]`. None: not a GPU these tables can place (an unknown id, or a
    /// chip of no CUDA-usable compute capability).
    pub fn identify_pci(&self, device_id: &str) -> Option<PciGpu> {
        let db = self.pci_name(device_id);
        let chip_of = |n: &str| gpu_entry(n, &self.gpus.chips).map(|e| e.chip.chip.clone());
        if let Some(m) = self.gpu_by_pci_id(device_id) {
            return Some(PciGpu {
                name: m.name.clone(),
                cc: m.cc,
                chip: db.and_then(chip_of),
                source: PciGpuSource::Table,
            });
        }
        let e = gpu_entry(db?, &self.gpus.chips)?;
        Some(PciGpu {
            name: e.product.to_string(),
            cc: e.cc,
            chip: Some(e.chip.chip.clone()),
            source: PciGpuSource::PciIds,
        })
    }

    /// GPUs whose name matches `query` (see the module's notes): the `[[gpu]]` rows first,
    /// then the names pci.ids gives. Several hits mean the query names several models
    /// (of one compute capability or not).
    pub fn gpus_by_name(&self, query: &str) -> Vec<&GpuModel> {
        let q = Words::of(query);
        if q.all.is_empty() {
            return Vec::new();
        }
        // A name a tool prints that is no model's ("Orin (nvgpu)"): the models it stands for.
        let aliased: Vec<&GpuModel> = self
            .gpus
            .gpus
            .iter()
            .filter(|m| m.aliases.iter().any(|a| Words::of(a).all == q.all))
            .collect();
        if !aliased.is_empty() {
            return aliased;
        }
        let hits = match_models(&q, self.gpus.gpus.iter());
        if !hits.is_empty() {
            return hits;
        }
        match_models(&q, self.pci.models().iter())
    }

    /// Whether only Jetson (Tegra) modules have compute capability `cc`: every GPU of it
    /// in the tables is an `embedded` one (8.7 is Orin's alone, 7.2 Xavier's, 11.0 Thor's).
    pub fn jetson_only(&self, cc: ComputeCapability) -> bool {
        let mut of_cc = self.gpus.gpus.iter().filter(|g| g.cc == cc).peekable();
        of_cc.peek().is_some() && of_cc.all(|g| g.segment.as_deref() == Some("embedded"))
    }

    /// The JetPack release of Jetson Linux `l4t` (`36.4.0` → 6.1): the row of the same
    /// version, missing trailing parts read as 0 (`36.4` is `36.4.0`, not `36.4.3`).
    pub fn jetpack_for(&self, l4t: &crate::version::Version) -> Option<&super::JetPackRow> {
        // Versions compare with unwritten parts as 0.
        self.gpus.jetpacks.iter().find(|r| r.l4t == *l4t)
    }

    /// The compute capability a name stands for, when every model it matches has the same.
    pub fn cc_by_name(&self, query: &str) -> Option<ComputeCapability> {
        let hits = self.gpus_by_name(query);
        let cc = hits.first()?.cc;
        hits.iter().all(|g| g.cc == cc).then_some(cc)
    }

    /// Replaces the pci.ids database (a refreshed one).
    pub fn with_pci_ids(mut self, ids: PciIds, origin: String) -> Tables {
        self.pci = Arc::new(PciDb::new(ids, origin, &self.gpus.chips));
        self
    }
}

fn match_models<'a>(
    q: &Words,
    models: impl Iterator<Item = &'a GpuModel> + Clone,
) -> Vec<&'a GpuModel> {
    let with = |key: fn(&Words) -> String| -> Vec<&'a GpuModel> {
        let want = key(q);
        if want.is_empty() {
            return Vec::new();
        }
        models
            .clone()
            .filter(|m| key(&Words::of(&m.name)) == want)
            .collect()
    };
    // 1. The whole name; 2. without memory and form factor.
    for key in [Words::full_key as fn(&Words) -> String, Words::sized_key] {
        let hits = with(key);
        if !hits.is_empty() {
            return hits;
        }
    }
    // 3. Without the laptop words too: the models on the query's side (laptop or not)
    // when there are some.
    let hits = with(Words::core_key);
    if !hits.is_empty() {
        let same: Vec<&GpuModel> = hits
            .iter()
            .copied()
            .filter(|m| Words::of(&m.name).laptop == q.laptop)
            .collect();
        return if same.is_empty() { hits } else { same };
    }
    // 4. Every model whose words hold all of the query's.
    if q.core.is_empty() {
        return Vec::new();
    }
    models
        .filter(|m| {
            let have = Words::of(&m.name).core;
            q.core.iter().all(|w| have.contains(w))
        })
        .collect()
}

/// A GPU name's words, lowercase, without "NVIDIA" and "GeForce".
pub(super) fn name_words(name: &str) -> Vec<String> {
    name.to_ascii_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty() && *w != "nvidia" && *w != "geforce")
        .map(str::to_string)
        .collect()
}

/// The words of a name, sorted into what identifies the model and what does not.
struct Words {
    /// Every word (less the vendor and brand).
    all: Vec<String>,
    /// Without memory sizes and form factors.
    sized: Vec<String>,
    /// Without the laptop words too.
    core: Vec<String>,
    /// Whether the name says laptop (`Laptop GPU`, `Mobile`, `Max-Q`).
    laptop: bool,
}

impl Words {
    fn of(name: &str) -> Words {
        let all = name_words(name);
        let sized: Vec<String> = all
            .iter()
            .filter(|w| !is_memory(w) && !is_form_factor(w))
            .cloned()
            .collect();
        let laptop = sized
            .iter()
            .any(|w| is_laptop(w) && w != "gpu" && w != "with");
        let core = sized.iter().filter(|w| !is_laptop(w)).cloned().collect();
        Words {
            all,
            sized,
            core,
            laptop,
        }
    }

    fn full_key(&self) -> String {
        self.all.concat()
    }

    fn sized_key(&self) -> String {
        self.sized.concat()
    }

    fn core_key(&self) -> String {
        self.core.concat()
    }
}

/// `80gb`, `16g`, `512mb`.
fn is_memory(w: &str) -> bool {
    let digits = w.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && matches!(&w[digits..], "g" | "gb" | "mb" | "tb")
}

/// `sxm4`, `pcie`, `hbm3e`, `nvl`, `nvl16`, `dgxs`, `fhhl`.
fn is_form_factor(w: &str) -> bool {
    let tail_digits = |p: &str| {
        w.strip_prefix(p)
            .is_some_and(|r| r.trim_end_matches('e').bytes().all(|b| b.is_ascii_digit()))
    };
    matches!(w, "pcie" | "dgxs" | "fhhl")
        || tail_digits("sxm")
        || tail_digits("hbm")
        || tail_digits("nvl")
}

fn is_laptop(w: &str) -> bool {
    matches!(
        w,
        "laptop" | "gpu" | "mobile" | "notebook" | "max" | "q" | "maxq" | "with" | "design"
    )
}

/// The checks of the `[[chip]]` table (called with the other table checks).
pub(super) fn validate(t: &Tables) -> Result<(), TableError> {
    let bad = |key: String, problem: String| TableError::Invalid {
        file: super::FILES[3].to_string(),
        key,
        problem,
    };
    let mut seen = std::collections::HashSet::new();
    for c in &t.gpus.chips {
        let k = format!("chip \"{}\"", c.chip);
        if c.chip.is_empty()
            || !c
                .chip
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        {
            return Err(bad(
                k,
                "must be uppercase letters and digits, as pci.ids writes it".into(),
            ));
        }
        if !seen.insert(c.chip.as_str()) {
            return Err(bad(k, "appears twice".into()));
        }
        if t.architecture_of(c.cc).is_none() {
            return Err(bad(
                k,
                format!("compute capability {} belongs to no architecture", c.cc),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tables() -> Tables {
        Tables::embedded().unwrap()
    }

    #[test]
    fn name_keys_ignore_brand_prefixes_only() {
        assert_eq!(
            Words::of("NVIDIA GeForce RTX 4090").full_key(),
            Words::of("rtx 4090").full_key()
        );
        assert_ne!(
            Words::of("RTX 4090").full_key(),
            Words::of("RTX 4090 Laptop GPU").full_key()
        );
        let w = Words::of("NVIDIA A100-SXM4-80GB");
        assert_eq!(w.sized, ["a100"]);
        let w = Words::of("NVIDIA GeForce RTX 2080 Super with Max-Q Design");
        assert_eq!(w.core, ["rtx", "2080", "super"]);
        assert!(w.laptop);
        assert!(is_memory("141gb") && is_memory("16g") && !is_memory("t4g") && !is_memory("g"));
        assert!(is_form_factor("sxm5") && is_form_factor("hbm3e") && is_form_factor("nvl16"));
        assert!(!is_form_factor("sxmx") && !is_form_factor("a100"));
    }

    /// Names as NVML, nvidia-smi, Windows and users write them (each failed on the base
    /// commit: data-centre names with form factors, the MX series, brand prefixes).
    #[test]
    fn names_as_tools_report_them_resolve() {
        let t = tables();
        for (name, cc) in [
            ("NVIDIA GeForce RTX 4060 Laptop GPU", "8.9"),
            ("NVIDIA A100-SXM4-80GB", "8.0"),
            ("NVIDIA A100 80GB PCIe", "8.0"),
            ("NVIDIA H100 80GB HBM3", "9.0"),
            ("NVIDIA H100 PCIe", "9.0"),
            ("NVIDIA H100 NVL", "9.0"),
            ("NVIDIA H200", "9.0"),
            ("NVIDIA H20", "9.0"),
            ("Tesla V100-SXM2-32GB", "7.0"),
            ("Tesla V100-PCIE-16GB", "7.0"),
            ("Tesla P100-PCIE-16GB", "6.0"),
            ("Tesla T4", "7.5"),
            ("Tesla M40", "5.2"),
            ("Tesla M60", "5.2"),
            ("Tesla P4", "6.1"),
            ("Tesla P40", "6.1"),
            ("NVIDIA A2", "8.6"),
            ("NVIDIA A10", "8.6"),
            ("NVIDIA A16", "8.6"),
            ("NVIDIA A30", "8.0"),
            ("NVIDIA A40", "8.6"),
            ("NVIDIA L4", "8.9"),
            ("NVIDIA L40", "8.9"),
            ("NVIDIA L40S", "8.9"),
            ("NVIDIA B200", "10.0"),
            ("NVIDIA B300", "10.3"),
            ("NVIDIA GB300", "10.3"),
            ("Quadro RTX 5000", "7.5"),
            ("NVIDIA RTX A4000", "8.6"),
            ("NVIDIA GeForce MX110", "5.0"),
            ("NVIDIA GeForce MX130", "5.0"),
            ("NVIDIA GeForce MX150", "6.1"),
            ("NVIDIA GeForce MX230", "6.1"),
            ("NVIDIA GeForce MX250", "6.1"),
            ("NVIDIA GeForce MX330", "6.1"),
            ("NVIDIA GeForce MX350", "6.1"),
            ("NVIDIA GeForce MX450", "7.5"),
            ("NVIDIA GeForce MX550", "7.5"),
            ("NVIDIA GeForce MX570", "8.6"),
            ("NVIDIA GeForce RTX 3060 Ti", "8.6"),
            ("GeForce GTX 1080 Ti", "6.1"),
            ("NVIDIA TITAN RTX", "7.5"),
            ("NVIDIA RTX 6000 Ada Generation", "8.9"),
            ("NVIDIA GeForce RTX 5090 D", "12.0"),
            ("NVIDIA GeForce RTX 2050", "8.6"),
            ("NVIDIA GeForce RTX 2080 Super with Max-Q Design", "7.5"),
            ("NVIDIA GeForce GTX 1060 with Max-Q Design", "6.1"),
            ("NVIDIA GeForce RTX 3050 Ti Laptop GPU", "8.6"),
            ("NVIDIA GeForce RTX 4090 Laptop GPU", "8.9"),
            ("NVIDIA RTX 2000 Ada Generation Laptop GPU", "8.9"),
            ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "12.0"),
            ("Quadro M1200", "5.0"),
            ("Quadro P2000", "6.1"),
            ("NVIDIA T1000 8GB", "7.5"),
        ] {
            assert_eq!(
                t.cc_by_name(name).map(|c| c.to_string()).as_deref(),
                Some(cc),
                "{name}: {:?}",
                t.gpus_by_name(name)
                    .iter()
                    .map(|g| (&g.name, g.cc))
                    .collect::<Vec<_>>()
            );
        }
    }

    /// Normalising never merges two chips: the Ti, the letter of an RTX A-series card, the
    /// Ada generation and the Quadro of the same number stay apart.
    #[test]
    fn different_chips_stay_apart() {
        let t = tables();
        let one = |q: &str| {
            let hits = t.gpus_by_name(q);
            assert_eq!(
                hits.len(),
                1,
                "{q}: {:?}",
                hits.iter().map(|g| &g.name).collect::<Vec<_>>()
            );
            hits[0].name.clone()
        };
        assert_eq!(one("NVIDIA GeForce RTX 4060"), "GeForce RTX 4060");
        assert_eq!(one("NVIDIA GeForce RTX 4060 Ti"), "GeForce RTX 4060 Ti");
        assert_eq!(one("NVIDIA RTX A4000"), "RTX A4000");
        assert_eq!(
            one("NVIDIA RTX 4000 Ada Generation"),
            "RTX 4000 Ada Generation"
        );
        assert_eq!(one("Quadro RTX 5000"), "Quadro RTX 5000");
        assert_eq!(
            one("NVIDIA RTX 5000 Ada Generation"),
            "RTX 5000 Ada Generation"
        );
        assert_eq!(
            one("NVIDIA GeForce RTX 4060 Laptop GPU"),
            "GeForce RTX 4060 Laptop GPU"
        );
        assert_eq!(one("Tesla V100S-PCIE-32GB"), "Tesla V100S");
        // A laptop name without its own row is the desktop model (one chip family).
        assert_eq!(
            one("GeForce RTX 3050 A Laptop GPU"),
            "GeForce RTX 3050 A Laptop GPU"
        );
        // "RTX 5000" alone is three generations: ambiguous, not the first one found.
        let hits = t.gpus_by_name("RTX 5000");
        assert!(hits.iter().any(|g| g.name == "Quadro RTX 5000"));
        assert!(hits.iter().any(|g| g.name == "RTX 5000 Ada Generation"));
        assert_eq!(t.cc_by_name("RTX 5000"), None);
        assert!(t.gpus_by_name("Voodoo 5 6000").is_empty());
        assert!(t.gpus_by_name("NVIDIA").is_empty());
    }

    #[test]
    fn pci_ids_parse_nvidia_only_and_skip_malformed_lines() {
        let text = "#\n#\tVersion: 2026.06.01\n#\n\
            1002  Advanced Micro Devices, Inc. [AMD/ATI]\n\t744c  Navi 31\n\
            10de  NVIDIA Corporation\n\
            \t2B85  GB202 [GeForce RTX 5090]\n\
            \t\t1043 89e5  ASUS card\n\
            \tzz12  not hex\n\
            \t1f97 missing two spaces\n\
            \t1f97  TU117M [GeForce MX450]\x07\n\
            \t1f97  duplicate\n\
            # a comment\n\
            10df  Emulex Corporation\n\t0720  OneConnect\n";
        let p = PciIds::parse(text);
        assert_eq!(p.version.as_deref(), Some("2026.06.01"));
        assert_eq!(p.devices.len(), 2, "{:?}", p.devices);
        assert_eq!(p.devices["0x2b85"], "GB202 [GeForce RTX 5090]");
        assert_eq!(p.devices["0x1f97"], "TU117M [GeForce MX450]");
        // Round trip through the cache's text.
        let again = PciIds::parse(&p.to_text("https://example.invalid/pci.ids"));
        assert_eq!(again, p);
        // Bounded: a huge text is cut, not read whole.
        let big = format!(
            "10de  NVIDIA Corporation\n{}",
            "\t2b85  GB202 [x]\n".repeat(MAX_PCI_IDS_BYTES / 8)
        );
        assert_eq!(PciIds::parse(&big).devices.len(), 1);
        assert!(PciIds::parse("garbage\u{0}\n\t\t\n").devices.is_empty());
        let old = PciIds {
            version: Some("2026.05.24".into()),
            ..Default::default()
        };
        assert!(p.newer_than(&old) && !old.newer_than(&p) && !PciIds::default().newer_than(&old));
    }

    #[test]
    fn chips_are_found_through_variant_suffixes() {
        let t = tables();
        let cc = |name: &str| gpu_entry(name, &t.gpus.chips).map(|e| e.cc.to_string());
        assert_eq!(
            cc("GA106 [GeForce RTX 3060 Lite Hash Rate]").as_deref(),
            Some("8.6")
        );
        assert_eq!(cc("GM108M [GeForce MX130]").as_deref(), Some("5.0"));
        assert_eq!(cc("GK208BM [GeForce 920M]").as_deref(), Some("3.5"));
        assert_eq!(cc("GK110B [GeForce GTX 780 Ti]").as_deref(), Some("3.5"));
        assert_eq!(
            cc("GA107BM / GN20-P0-R-K2 [GeForce RTX 3050 6GB Laptop GPU]").as_deref(),
            Some("8.6")
        );
        assert_eq!(cc("GB10B [Jetson AGX Thor]").as_deref(), Some("11.0"));
        assert_eq!(cc("GB20B [GB10]").as_deref(), Some("12.1"));
        assert_eq!(cc("GB110 [B300 SXM6 AC]").as_deref(), Some("10.3"));
        assert_eq!(cc("GH100").as_deref(), Some("9.0"));
        // Not GPUs, or not CUDA-usable here.
        assert_eq!(cc("GB202 High Definition Audio Controller"), None);
        assert_eq!(cc("GH100 [H100 NVSwitch]"), None);
        assert_eq!(cc("GK107 [GeForce GT 640]"), None);
        assert_eq!(cc("GB6-256(N22W-ES-A1)"), None);
        assert_eq!(
            alternatives("GeForce 945M / 945A"),
            ["GeForce 945M", "GeForce 945A"]
        );
        assert_eq!(
            alternatives("GeForce RTX 4070 Max-Q / Mobile"),
            ["GeForce RTX 4070 Max-Q"]
        );
    }

    /// PCI ids with no `[[gpu]]` row are placed through pci.ids and the chip table (each
    /// was unknown on the base commit).
    #[test]
    fn pci_ids_without_a_row_resolve_through_the_database() {
        let t = tables();
        for (id, cc, chip) in [
            ("0x1407", "5.2", "GM206"), // GeForce GTX 750 v2: GM206, not the GM107 GTX 750
            ("0x1c2d", "6.1", "GP106"),
            ("0x2302", "9.0", "GH100"),
            ("0x2920", "10.0", "GB100"),
            ("0x31a1", "10.3", "GB110"),
            ("0x2c3a", "12.0", "GB203"),
            ("0x2bb2", "12.0", "GB202"),
        ] {
            let g = t.identify_pci(id).unwrap_or_else(|| panic!("{id}"));
            assert_eq!(g.cc.to_string(), cc, "{id}");
            assert_eq!(g.chip.as_deref(), Some(chip), "{id}");
            assert_eq!(g.source, PciGpuSource::PciIds, "{id}");
        }
        let mx = t.identify_pci("1F97").unwrap();
        assert_eq!(
            (mx.name.as_str(), mx.cc.to_string().as_str()),
            ("GeForce MX450", "7.5")
        );
        assert_eq!(mx.source, PciGpuSource::Table);
        assert_eq!(mx.chip.as_deref(), Some("TU117"));
        // Not GPUs, unknown, Kepler GK10x (CC 3.0): not identified.
        for id in ["0x22e8", "0x22a3", "0xffff", "0x0fc1", "0x1180", "zz"] {
            assert_eq!(t.identify_pci(id), None, "{id}");
        }
        assert_eq!(t.pci_name("0x1180"), Some("GK104 [GeForce GTX 680]"));
    }

    /// Every `[[gpu]]` id the database has names a chip of the row's compute capability.
    #[test]
    fn curated_rows_agree_with_the_database() {
        let t = tables();
        for g in &t.gpus.gpus {
            for id in &g.pci_ids {
                let Some(name) = t.pci_name(id) else { continue };
                if let Some(e) = gpu_entry(name, &t.gpus.chips) {
                    assert_eq!(e.cc, g.cc, "{} {id}: pci.ids says {name}", g.name);
                }
            }
        }
    }

    /// The closing note's figures (printed with `--nocapture`).
    #[test]
    fn figures() {
        let t = tables();
        // Names resolvable: every `[[gpu]]` row's, and every pci.ids name no row answers.
        let from_pci_only = t
            .pci
            .models()
            .iter()
            .filter(|m| match_models(&Words::of(&m.name), t.gpus.gpus.iter()).is_empty())
            .count();
        let mapped = t
            .pci
            .ids
            .devices
            .keys()
            .filter(|id| t.identify_pci(id).is_some())
            .count();
        let curated_ids: usize = t.gpus.gpus.iter().map(|g| g.pci_ids.len()).sum();
        eprintln!(
            "FIGURES: [[gpu]] rows {}, their PCI ids {curated_ids}; pci.ids NVIDIA device lines {}, \
             ids placed with a CC {mapped}; chips {}; names resolvable {} ({} rows + {from_pci_only} from pci.ids)",
            t.gpus.gpus.len(),
            t.pci.ids.devices.len(),
            t.gpus.chips.len(),
            t.gpus.gpus.len() + from_pci_only,
            t.gpus.gpus.len(),
        );
        assert!(mapped > curated_ids);
    }
}
