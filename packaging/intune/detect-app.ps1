# Detection rule for an Intune Win32 app or a Configuration Manager application that runs
# `cuda-setup state set`: "installed" is exit 0 with a line on stdout, "not installed" is
# exit 0 with nothing printed (any other exit reads as a failure), so this prints a line
# only when the PC matches the lab profile, and always exits 0.
# https://learn.microsoft.com/en-us/intune/configmgr/develop/compliance/about-compliance-settings--dcm--extensibility

# cuda-setup writes UTF-8; PowerShell decodes a program's output with the console's
# encoding, on a Chinese PC code page 936: garbled text and broken JSON. No console (an
# IOException) leaves it as it is, quietly: stderr would read as a script error.
# https://gist.github.com/jborean93/44b4688cc518d67bd7bc2192648384a3
try { [Console]::OutputEncoding = [Text.Encoding]::UTF8 } catch { }
$labProfile = '\\fileserver\lab\lab.toml'
# Where an elevated cuda-setup run keeps a copy of itself; else the one on PATH.
$exe = "$env:ProgramFiles\cuda-setup\cuda-setup.exe"
if (-not (Test-Path $exe)) {
    $cmd = Get-Command cuda-setup.exe -ErrorAction SilentlyContinue
    if (-not $cmd) { exit 0 }   # no cuda-setup yet: not installed
    $exe = $cmd.Source
}

$null = & $exe state test --profile $labProfile 2>&1
if ($LASTEXITCODE -eq 0) { Write-Output 'in the desired state' }
exit 0
