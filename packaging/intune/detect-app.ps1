# Detection rule for an Intune Win32 app or a Configuration Manager application that runs
# `cuda-setup state set`: "installed" is exit 0 with a line on stdout, "not installed" is
# exit 0 with nothing printed (any other exit reads as a failure), so this prints a line
# only when the PC matches the lab profile, and always exits 0.
# https://learn.microsoft.com/en-us/intune/configmgr/develop/compliance/about-compliance-settings--dcm--extensibility

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
