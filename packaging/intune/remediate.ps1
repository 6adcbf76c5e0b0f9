# Intune Remediations, remediation script: make this PC match the lab profile.
# Runs `cuda-setup state set` (the same plan and steps as `install`; a second run changes
# nothing) and writes this PC's report to the share. Exit 0 when done; 3010 (done, the
# driver needs a restart) is a success too: the last line says a restart is pending.
# Intune shows the last line printed.
# Contract: https://learn.microsoft.com/en-us/intune/intune-service/fundamentals/remediations
# Settings: run as SYSTEM (the default), in 64-bit PowerShell.

# cuda-setup writes UTF-8; PowerShell decodes a program's output with the console's
# encoding, on a Chinese PC code page 936: garbled text and broken JSON. No console (an
# IOException) leaves it as it is, quietly: stderr would read as a script error.
# https://gist.github.com/jborean93/44b4688cc518d67bd7bc2192648384a3
try { [Console]::OutputEncoding = [Text.Encoding]::UTF8 } catch { }
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
# A failed run is the last of `runs` (state set stops there): its error and what to do.
$runs = @($result.runs | Where-Object { $_ })
$failure = if ($runs.Count) { $runs[-1].failure } else { $null }
if ($failure) { $why = "$($failure.error) ($($failure.hint))" }
elseif ($result -and $result.drift) {
    # Every run succeeded but a layer no step fixes is left (1603): name it.
    $why = 'still drifted: ' + (($result.drift | ForEach-Object { "$($_.layer): $($_.fix)" }) -join '; ')
}
else { $why = $err | Select-Object -Last 1 }
Write-Output "cuda-setup state set exited $code`: $why"
exit $code
