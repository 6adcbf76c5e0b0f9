# Intune Remediations, remediation script: make this PC match the lab profile.
# Runs `cuda-setup state set` (the same plan and steps as `install`; a second run changes
# nothing) and writes this PC's report to the share. Exit 0 when done; 3010 (done, the
# driver needs a restart) is a success too: the last line says a restart is pending.
# Intune shows the last line printed.
# Contract: https://learn.microsoft.com/en-us/intune/intune-service/fundamentals/remediations
# Settings: run as SYSTEM (the default), in 64-bit PowerShell.

$labProfile = '\\fileserver\lab\lab.toml'
$report = '\\fileserver\cuda-reports\%COMPUTERNAME%.json'
# Where an elevated cuda-setup run keeps a copy of itself; else the one on PATH.
$exe = "$env:ProgramFiles\cuda-setup\cuda-setup.exe"
if (-not (Test-Path $exe)) { $exe = (Get-Command cuda-setup.exe -ErrorAction Stop).Source }

# --wait: if another cuda-setup is installing (1618), wait for it instead of failing.
$all = & $exe state set --profile $labProfile --report $report --json --wait 2>&1
$code = $LASTEXITCODE
$out = ($all | Where-Object { $_ -isnot [System.Management.Automation.ErrorRecord] }) -join "`n"
$err = $all | Where-Object { $_ -is [System.Management.Automation.ErrorRecord] } | ForEach-Object { "$_" }
try { $result = $out | ConvertFrom-Json } catch { $result = $null }

if ($code -eq 0) { Write-Output "done (changed: $($result.changed))"; exit 0 }
if ($code -eq 3010) { Write-Output 'done; restart the PC to finish the driver update'; exit 0 }
# 1603 failed, 1602 cancelled, 2 a profile it cannot read: cuda-setup's own words.
$why = if ($result -and $result.failure) { $result.failure.error } else { $err | Select-Object -Last 1 }
Write-Output "cuda-setup state set exited $code`: $why"
exit $code
