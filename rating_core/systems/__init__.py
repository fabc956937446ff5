"""The rating systems, one package each (`fide`, `ukd`, `club`, `site`, `fibs`), the engine
contract every period engine returns (`contract`), and the range functions the assets call:
`federation` (FIDE, UKD, club) and `platform` (site, FIBS)."""
