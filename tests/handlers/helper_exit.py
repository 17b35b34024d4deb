#!/usr/bin/env python3
# helper_exit.py -- a handler on the Python helper module that ends its
# job with sys.exit(payload["exit"]) (tests/promises.sh, item 15).
import sys

import jobq_handler

jobq_handler.serve(lambda payload, job: sys.exit(payload["exit"]))
