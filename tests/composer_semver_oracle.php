<?php
// The oracle of tests/test_composer_versions_oracle.py: composer/semver answers each stdin line.
// "n\tV": VersionParser::normalize(V); "c\tA\tB": version_compare of both normalised (-1/0/1);
// "s\tV\tC": Semver::satisfies(V, C) (1/0). Anything Composer rejects answers ERR.
require $argv[1];
use Composer\Semver\Semver;
use Composer\Semver\VersionParser;

$parser = new VersionParser();
while (($line = fgets(STDIN)) !== false) {
    $f = explode("\t", rtrim($line, "\n"));
    try {
        if ($f[0] === 'n') {
            $out = $parser->normalize($f[1]);
        } elseif ($f[0] === 'c') {
            $out = (string) version_compare($parser->normalize($f[1]), $parser->normalize($f[2]));
        } else {
            $out = Semver::satisfies($f[1], $f[2]) ? '1' : '0';
        }
    } catch (\Throwable $e) {
        $out = 'ERR';
    }
    echo $out, "\n";
}
