"""`rlm calibrate`: measure how a model's accuracy falls as its prompt fills, and keep a profile.

Two tasks, scored by code (never by a model):
- **needle**: one fact (a door code) somewhere in routine meeting talk; correct when the answer
  holds the code;
- **synthesis**: three facts about one offsite (city, hotel rooms, start date) spread through the
  text at about 1/6, 1/2 and 5/6 of its depth; correct only when the answer holds all three.

Each task runs at increasing fill levels (the prompt's share of the model's context, up to what
still leaves room for the answer), a few repetitions each, with the fact(s) at different depths.
The prompt has the same clean layout as every sub-call of rlm: instructions first, then the
question, then only the material.

The profile (JSON, in ``<user config dir>/profiles/``; env ``RLM_CONFIG_DIR`` overrides the
directory) keeps the curve and two breakpoints. A breakpoint is the largest fill level whose
accuracy is >= 90% *and* every smaller level's too (before the first level that falls below 90%:
a lucky pass after a failure does not count). The usable window for one call is 80% of the
synthesis breakpoint, in prompt tokens; the gate and the chunker use it when a profile for the
model exists (see ``profile_window``) and say so in the gate's reasons.

Modules: ``profile`` (profile files, the window the gate uses), ``material`` (+ material.toml:
the prompts' own filler and facts), ``trials`` (one prompt at a fill level, scoring), ``run``
(the measurement), ``report`` (table, summary, SVG plot).
"""

from rlm.calibrate.profile import (CONFIG_ENV, PROFILE_VERSION, THRESHOLD, WINDOW_SHARE, config_dir,
                                   load_profile, profile_path, profile_window, save_profile)
from rlm.calibrate.report import curve_table, plot_profile, summary_lines
from rlm.calibrate.run import (DEFAULT_LEVELS, DEFAULT_REPS, QUICK_LEVELS, breakpoint, calibrate,
                               run_calibration)
from rlm.calibrate.trials import (ANSWER_MAX_TOKENS, SYSTEM, CalibAnswer, Trial, build_trial,
                                  levels_tokens, score_answer)

__all__ = ["ANSWER_MAX_TOKENS", "CONFIG_ENV", "DEFAULT_LEVELS", "DEFAULT_REPS", "PROFILE_VERSION",
           "QUICK_LEVELS", "SYSTEM", "THRESHOLD", "WINDOW_SHARE", "CalibAnswer", "Trial",
           "breakpoint", "build_trial", "calibrate", "config_dir", "curve_table", "levels_tokens",
           "load_profile", "plot_profile", "profile_path", "profile_window", "run_calibration",
           "save_profile", "score_answer", "summary_lines"]
