import './base.css';
import './pairing.css';
