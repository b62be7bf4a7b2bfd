"""Other tools' recordings: vcrpy, VCR, go-vcr and HAR files read in, vcrpy cassettes written.

`reading` opens any recording file safely (size, compression, YAML); `vcr` and `har` turn
a document into exchanges; `importer` turns exchanges into cassettes; `export` writes a
cassette as a vcrpy cassette. Neither spells an event type: `dialects` says which
provider a call is, from what each provider's own `interop` module supplies (in
`harness._providers`), and where a call was served (Bedrock, Vertex) the host's
(`harness._hosts`: its paths, its frames). It may import the flat core,
`harness._cassette`, `harness._hosts` and `harness._providers`.
"""
