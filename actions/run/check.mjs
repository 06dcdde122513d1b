// actions/run's first step: checks every input of its later steps before acquire (run.mjs).
import { runCheck } from '../lib/run.mjs';

runCheck();
