# Intune Remediations, detection script: does this PC match the lab profile?
# Exit 0: it does (nothing to do). Exit 1: it has drifted, and Intune runs remediate.ps1.
# It changes nothing; it writes this PC's report to the share for `cuda-setup fleet collect`.
# Intune shows the last line printed: one line naming what drifted.
# Contract: https://learn.microsoft.com/en-us/intune/intune-service/fundamentals/remediations
# Settings: run as SYSTEM (the default), in 64-bit PowerShell.

# cuda-setup writes UTF-8; PowerShell decodes a program's output with the console's
# encoding, on a Chinese PC code page 936: garbled text and broken JSON. No console (an
# IOException) leaves it as it is, quietly: stderr would read as a script error.
# https://gist.github.com/jborean93/44b4688cc518d67bd7bc2192648384a3
try { [Console]::OutputEncoding = [Text.Encoding]::UTF8 } catch { }
$labProfile = '\\fileserver\lab\lab.toml'
# cuda-setup expands %COMPUTERNAME% itself (the profile's [report] path can say this instead).
$report = '\\fileserver\cuda-reports\%COMPUTERNAME%.json'
# Where an elevated cuda-setup run keeps a copy of itself; else the one on PATH.
$exe = "$env:ProgramFiles\cuda-setup\cuda-setup.exe"
if (-not (Test-Path $exe)) { $exe = (Get-Command cuda-setup.exe -ErrorAction Stop).Source }

# stdout is the JSON; stderr lines come back as ErrorRecords and are kept apart.
$all = & $exe state test --profile $labProfile --report $report --json 2>&1
$code = $LASTEXITCODE
$out = ($all | Where-Object { $_ -isnot [System.Management.Automation.ErrorRecord] }) -join "`n"
$err = $all | Where-Object { $_ -is [System.Management.Automation.ErrorRecord] } | ForEach-Object { "$_" }
try { $result = $out | ConvertFrom-Json } catch { $result = $null }

if ($code -eq 0) { Write-Output 'in the desired state'; exit 0 }
if ($code -eq 1 -and $result) {
    $drift = $result.drift | ForEach-Object { "$($_.layer): $($_.is) -> $($_.should)" }
    Write-Output ('drift: ' + ($drift -join '; '))
    exit 1
}
# A profile cuda-setup cannot read, or another failure: say cuda-setup's own words.
Write-Output "cuda-setup state test exited $code`: $(($err | Select-Object -Last 1))"
exit $code
