use super::*;
use crate::services::build_steps::Build;

/// A manifest in `root/contenders/<name>` whose `[build]` table is `build`.
fn manifest(root: &Path, name: &str, build: &str) -> Manifest {
    let text = format!(
        "name = {name:?}\nmodel = \"event-loop\"\nlanguage = \"x\"\nframework = \"F\"\n\
         config = \"c\"\nartifact = \"a\"\nstart = [\"a\"]\nready = \"/\"\n[build]\n{build}\n"
    );
    let mut m: Manifest = toml::from_str(&text).unwrap();
    m.dir = root.join("contenders").join(name);
    m.build.validate(Path::new("contender.toml")).unwrap();
    m
}

fn build(text: &str) -> Build {
    toml::from_str(text).unwrap()
}

fn refusal(text: &str) -> String {
    build(text)
        .validate(Path::new("c/contender.toml"))
        .unwrap_err()
        .to_string()
}

#[test]
fn a_maven_contender_leaves_its_steps_to_the_reactor() {
    let said = refusal("toolchain = \"maven\"\ncommand = \"mvn package\"\noutput = \"x.jar\"");
    assert!(said.contains("build.toolchain"), "{said}");
    assert!(said.contains("contenders/pom.xml"), "{said}");
    assert!(build("toolchain = \"maven\"")
        .validate(Path::new("c.toml"))
        .is_ok());
}

#[test]
fn a_command_comes_with_the_output_it_makes() {
    let said = refusal("toolchain = \"go\"\ncommand = \"go build\"");
    assert!(
        said.contains("build.command") && said.contains("output"),
        "{said}"
    );
    let said = refusal("toolchain = \"go\"\noutput = \"target/x\"");
    assert!(said.contains("build.command"), "{said}");
}

#[test]
fn steps_are_one_line_of_shell_and_the_toolchain_a_plain_name() {
    let said = refusal("toolchain = \"go\"\ntest = \"go vet\\ngo test\"");
    assert!(
        said.contains("build.test") && said.contains("one line"),
        "{said}"
    );
    let said = refusal("toolchain = \"go\"\ncheck = \" \"");
    assert!(said.contains("build.check"), "{said}");
    let said = refusal("toolchain = \"go; rm -rf /\"");
    assert!(said.contains("build.toolchain"), "{said}");
}

#[test]
fn contenders_sharing_a_folder_build_it_once_with_the_steps_one_declares() {
    let root = Path::new("/repo");
    let steps = "toolchain = \"node\"\ncommand = \"npm ci\"\noutput = \"node_modules/.package-lock.json\"\ninputs = [\"package.json\", \"package-lock.json\"]\ntest = \"node --test\"";
    let all = [
        manifest(root, "node", steps),
        manifest(
            root,
            "node-cluster",
            "toolchain = \"node\"\ndir = \"../node\"",
        ),
        manifest(root, "go", "toolchain = \"go\""),
    ];
    let builds = folder_builds(root, &all).unwrap();
    let folders: Vec<_> = builds
        .iter()
        .map(|b| b.folder.display().to_string())
        .collect();
    assert_eq!(folders, ["contenders/go", "contenders/node"]);
    assert_eq!(builds[1].build.command.as_deref(), Some("npm ci"));
    // The same whichever of the two comes first.
    let reversed = [all[1].clone(), all[0].clone()];
    let builds = folder_builds(root, &reversed).unwrap();
    assert_eq!(builds.len(), 1);
    assert_eq!(builds[0].build.test.as_deref(), Some("node --test"));
}

#[test]
fn two_manifests_may_not_both_declare_one_folders_steps_or_toolchain() {
    let root = Path::new("/repo");
    let a = manifest(root, "a", "toolchain = \"go\"\ncheck = \"gofmt -l .\"");
    let b = manifest(
        root,
        "b",
        "toolchain = \"go\"\ndir = \"../a\"\ntest = \"go test\"",
    );
    let said = folder_builds(root, &[a.clone(), b])
        .unwrap_err()
        .to_string();
    assert!(
        said.contains("both declare") && said.contains("contenders/a"),
        "{said}"
    );
    let c = manifest(root, "c", "toolchain = \"cargo\"\ndir = \"../a\"");
    let said = folder_builds(root, &[a, c]).unwrap_err().to_string();
    assert!(said.contains("different toolchains"), "{said}");
}

#[test]
fn a_build_folder_outside_the_checkout_is_refused() {
    let root = Path::new("/repo");
    let m = manifest(
        root,
        "a",
        "toolchain = \"go\"\ndir = \"../../../elsewhere\"",
    );
    let said = folder_builds(root, &[m]).unwrap_err().to_string();
    assert!(said.contains("outside the checkout"), "{said}");
}

#[test]
fn the_listing_has_nine_fields_a_line_with_a_dash_for_each_left_out() {
    let root = Path::new("/repo");
    let all = [
        manifest(
            root,
            "go",
            "toolchain = \"go\"\ninstall = \"apt-get install golang\"\ncommand = \"go build -o target/s .\"\noutput = \"target/s\"\ninputs = [\"*.go\", \"go.mod\"]\ncheck = \"test -z \\\"$(gofmt -l .)\\\"\"",
        ),
        manifest(root, "spring", "toolchain = \"maven\""),
    ];
    let listing = builds_listing(&folder_builds(root, &all).unwrap());
    let lines: Vec<Vec<&str>> = listing.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(
        lines[0],
        [
            "go",
            "contenders/go",
            "apt-get install golang",
            "target/s",
            "*.go go.mod",
            "go build -o target/s .",
            "-",
            "test -z \"$(gofmt -l .)\"",
            "-"
        ]
    );
    assert_eq!(
        lines[1],
        [
            "maven",
            "contenders/spring",
            "-",
            "-",
            "-",
            "-",
            "-",
            "-",
            "-"
        ]
    );
}

#[test]
fn the_message_for_a_missing_build_names_what_to_run_and_where() {
    let root = Path::new("/repo");
    let go = manifest(
        root,
        "go",
        "toolchain = \"go\"\ncommand = \"go build -o target/s .\"\noutput = \"target/s\"",
    );
    assert_eq!(
        describe(&go),
        "`go build -o target/s .` in /repo/contenders/go"
    );
    let spring = manifest(root, "spring", "toolchain = \"maven\"");
    assert!(describe(&spring).contains("contenders/pom.xml"));
}
