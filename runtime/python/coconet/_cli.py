"""The `coconetc` command a pip installation puts on the PATH: runs this
coconet's compiler (coconet._config.COCONETC) with the arguments given."""
import os
import sys

from . import _config


def coconetc():
    os.execv(_config.COCONETC, [_config.COCONETC] + sys.argv[1:])
