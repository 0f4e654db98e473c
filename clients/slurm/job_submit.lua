-- job_submit.lua for Slurm's job_submit/lua plugin (JobSubmitPlugins=lua):
-- a job that opts in with --comment=placement:recipe=/path/job.yaml and
-- names no partition is placed where PlacePlan says; every other job is
-- left alone. Install beside slurm.conf with placement_submit.lua (and,
-- optionally, placement_submit.conf); see docs/SLURM.md.
--
-- A site with a job_submit.lua of its own calls placement.submit from its
-- slurm_job_submit instead of using this file.

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
package.path = here .. "?.lua;" .. package.path

local placement = require("placement_submit")
placement.configure(here .. "placement_submit.conf")

function slurm_job_submit(job_desc, part_list, submit_uid)
  return placement.submit(job_desc, part_list, submit_uid)
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
  return slurm.SUCCESS
end

return slurm.SUCCESS
