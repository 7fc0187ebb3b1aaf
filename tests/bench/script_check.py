"""What the tests of bench/'s Python scripts share: run the script under test, write its input
files, check its --help and usage error, collect failed expectations, and exit with their count."""
import os
import subprocess
import sys


class ScriptCheck:
    def __init__(self, script):
        self.script = script
        self.failures = []

    def run(self, *arguments):
        return subprocess.run([sys.executable, self.script, *arguments], capture_output=True, text=True)

    def expect(self, condition, what):
        if not condition:
            self.failures.append(what)

    @staticmethod
    def write(directory, name, text):
        """Writes text to directory/name and returns the path."""
        path = os.path.join(directory, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def expect_help_and_usage_error(self, help_names, *too_few):
        """--help exits 0 and its text names help_names; the arguments too_few exit 2."""
        result = self.run("--help")
        self.expect(result.returncode == 0 and help_names in result.stdout, f"--help names {help_names}")
        result = self.run(*too_few)
        self.expect(result.returncode == 2, f"{list(too_few)} is a usage error: exit status {result.returncode}")

    def finish(self):
        for failure in self.failures:
            print("FAILED:", failure)
        print("all passed" if not self.failures else f"{len(self.failures)} failed")
        sys.exit(1 if self.failures else 0)
