"""Figures written as epsim writes every output (docs/reliability.md, "Files
a user owns"): to a temporary file beside the target, renamed over it when
complete, so an error or a Ctrl-C never leaves a truncated PNG or SVG in
place of an earlier one. Imported by plot_sweep.py, plot_plan.py and
plot_timeline.py, which sit beside it (also when installed)."""
import os
import tempfile


def save_figure(fig, path, **kwargs):
    """fig.savefig(path, **kwargs) through a temporary file in path's folder."""
    folder, name = os.path.split(os.path.abspath(path))
    ext = os.path.splitext(name)[1].lstrip(".")
    fd, temp = tempfile.mkstemp(prefix=f".{name}.", suffix=".epsim-tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as out:
            fig.savefig(out, format=ext, **kwargs)
        os.chmod(temp, 0o666 & ~_umask())
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask
